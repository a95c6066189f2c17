package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// CheckArgs checks a call's arguments against the JSON Schema of its
// tool's parameters (Info.Parameters; SchemaOf for the built-in tools)
// before the tool reads them: unknown parameters where the schema allows
// none, required ones missing, types, bounds, lengths and enums. It is the
// one place arguments are checked against a schema: Prepare calls it for
// every tool, the agent for its own (ask_user, update_plan).
//
// The error says every problem found, in the schema's words (the
// parameter, what it must be, what was sent), for the model to correct
// the call in one go. Keywords it does not know (a server's anyOf, $ref,
// pattern …) are not checked: the check never refuses what the schema
// allows.
func CheckArgs(schema, args json.RawMessage) error {
	root, err := compiledSchema(schema)
	if err != nil || root == nil {
		return nil // a schema that does not parse checks nothing; the tool decodes as before
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if !json.Valid(args) {
		var v any
		err := json.Unmarshal(args, &v) // its words: "unexpected end of JSON input"
		return &ArgsError{Problems: []string{fmt.Sprintf("they are not valid JSON (%v); send one JSON object with the parameters the tool's schema lists", err)}}
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ArgsError{Problems: []string{err.Error()}}
	}
	c := &argChecker{}
	if _, ok := v.(map[string]any); !ok && root.allows("object") {
		return &ArgsError{Problems: []string{"they must be one JSON object with the parameters the tool's schema lists, not " + jsonKindOf(v)}}
	}
	c.check(root, v, "")
	if len(c.problems) == 0 {
		return nil
	}
	return &ArgsError{Problems: c.problems}
}

// ArgsError lists what is wrong with a call's arguments.
type ArgsError struct {
	Problems []string
}

func (e *ArgsError) Error() string { return strings.Join(e.Problems, "; ") }

// argSchema is one node of a parameters schema, as far as CheckArgs reads
// it.
type argSchema struct {
	types      []string
	props      []argProp // in the schema's order
	required   []string
	closed     bool       // additionalProperties: false (and no patternProperties)
	extra      *argSchema // additionalProperties as a schema
	items      *argSchema
	enum       []json.RawMessage
	min, max   *big.Float // minimum, maximum
	minLen     *int       // minLength, minItems
	maxLen     *int       // maxLength, maxItems
	describing string     // the node's description, for a missing parameter
}

type argProp struct {
	name   string
	schema *argSchema
}

func (s *argSchema) allows(t string) bool { return len(s.types) == 0 || slices.Contains(s.types, t) }

func (s *argSchema) prop(name string) *argSchema {
	for _, p := range s.props {
		if p.name == name {
			return p.schema
		}
	}
	return nil
}

func (s *argSchema) names() []string {
	out := make([]string, len(s.props))
	for i, p := range s.props {
		out[i] = p.name
	}
	return out
}

// compiled caches schemas by their bytes: a tool's schema is built once
// and checked on every call.
var compiled sync.Map // string → *argSchema

func compiledSchema(raw json.RawMessage) (*argSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	if s, ok := compiled.Load(string(raw)); ok {
		return s.(*argSchema), nil
	}
	s, err := parseArgSchema(raw)
	if err != nil {
		return nil, err
	}
	compiled.Store(string(raw), s)
	return s, nil
}

// parseArgSchema reads the keywords CheckArgs checks; properties keep
// their order, for the messages that list them.
func parseArgSchema(raw json.RawMessage) (*argSchema, error) {
	var n struct {
		Type                 json.RawMessage   `json:"type"`
		Description          string            `json:"description"`
		Properties           json.RawMessage   `json:"properties"`
		PatternProperties    json.RawMessage   `json:"patternProperties"`
		Required             []string          `json:"required"`
		AdditionalProperties json.RawMessage   `json:"additionalProperties"`
		Items                json.RawMessage   `json:"items"`
		Enum                 []json.RawMessage `json:"enum"`
		Minimum              json.Number       `json:"minimum"`
		Maximum              json.Number       `json:"maximum"`
		MinLength            *int              `json:"minLength"`
		MaxLength            *int              `json:"maxLength"`
		MinItems             *int              `json:"minItems"`
		MaxItems             *int              `json:"maxItems"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	s := &argSchema{required: n.Required, enum: n.Enum, describing: n.Description}
	s.types = parseTypes(n.Type)
	s.min, s.max = parseBound(n.Minimum), parseBound(n.Maximum)
	s.minLen, s.maxLen = firstOf(n.MinLength, n.MinItems), firstOf(n.MaxLength, n.MaxItems)
	var err error
	if s.props, err = parseProps(n.Properties); err != nil {
		return nil, err
	}
	if len(n.PatternProperties) == 0 {
		switch ap := bytes.TrimSpace(n.AdditionalProperties); {
		case string(ap) == "false":
			s.closed = true
		case len(ap) > 0 && ap[0] == '{':
			if s.extra, err = parseArgSchema(ap); err != nil {
				return nil, err
			}
		}
	}
	if it := bytes.TrimSpace(n.Items); len(it) > 0 && it[0] == '{' {
		if s.items, err = parseArgSchema(it); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func parseTypes(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil && one != "" {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

func parseBound(n json.Number) *big.Float {
	if n == "" {
		return nil
	}
	f, _, err := big.ParseFloat(string(n), 10, 128, big.ToNearestEven)
	if err != nil {
		return nil
	}
	return f
}

func firstOf(a, b *int) *int {
	if a != nil {
		return a
	}
	return b
}

// parseProps reads "properties" in the order they are written.
func parseProps(raw json.RawMessage) ([]argProp, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("properties is not an object")
	}
	var out []argProp
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return nil, err
		}
		ps, err := parseArgSchema(sub)
		if err != nil {
			return nil, err
		}
		out = append(out, argProp{name: t.(string), schema: ps})
	}
	return out, nil
}

// argChecker collects the problems of one call's arguments.
type argChecker struct {
	problems []string
}

// maxArgProblems bounds the list: enough to fix a call in one go.
const maxArgProblems = 8

func (c *argChecker) problem(format string, a ...any) {
	if len(c.problems) < maxArgProblems {
		c.problems = append(c.problems, fmt.Sprintf(format, a...))
	}
}

// check checks v against s; path names v in the messages ("" is the
// arguments object itself).
func (c *argChecker) check(s *argSchema, v any, path string) {
	if !c.typeOK(s, v, path) {
		return
	}
	if len(s.enum) > 0 && !inEnum(s.enum, v) {
		c.problem("%s must be one of %s, not %s", path, enumText(s.enum), valueText(v))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		c.object(s, v, path)
	case []any:
		c.length(s, len(v), path, "item")
		for i, e := range v {
			if s.items != nil {
				c.check(s.items, e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case string:
		c.length(s, utf8.RuneCountInString(v), path, "character")
	case json.Number:
		c.bounds(s, v, path)
	}
}

// typeOK checks the JSON type; an integer is a number without a fraction.
func (c *argChecker) typeOK(s *argSchema, v any, path string) bool {
	if len(s.types) == 0 {
		return true
	}
	for _, t := range s.types {
		if hasType(v, t) {
			return true
		}
	}
	if path == "" {
		return true // the arguments themselves: CheckArgs said it
	}
	kinds := make([]string, len(s.types))
	for i, t := range s.types {
		kinds[i] = typeNoun(t)
	}
	c.problem("%s must be %s, not %s", path, strings.Join(kinds, " or "), jsonKindOf(v))
	return false
}

func hasType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case json.Number:
		if t == "number" {
			return true
		}
		f, _, err := big.ParseFloat(string(v), 10, 128, big.ToNearestEven)
		return t == "integer" && err == nil && f.IsInt()
	}
	return false
}

func typeNoun(t string) string {
	switch t {
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "null":
		return "null"
	}
	return t
}

// jsonKindOf names a decoded value's JSON type, as the model wrote it.
func jsonKindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a JSON boolean"
	case string:
		return "a JSON string"
	case json.Number:
		return "a JSON number"
	case []any:
		return "a JSON array"
	case map[string]any:
		return "a JSON object"
	}
	return fmt.Sprintf("%T", v)
}

// object checks required and unknown properties, then each property.
func (c *argChecker) object(s *argSchema, v map[string]any, path string) {
	for _, name := range s.required {
		if _, ok := v[name]; !ok {
			c.problem("%s is required%s", join(path, name), requiredHint(s.prop(name)))
		}
	}
	var unknown []string
	for name := range v {
		if s.prop(name) == nil {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		switch {
		case s.closed:
			c.problem("%s", unknownText(s, path, name))
		case s.extra != nil:
			c.check(s.extra, v[name], join(path, name))
		}
	}
	for _, p := range s.props {
		if pv, ok := v[p.name]; ok {
			c.check(p.schema, pv, join(path, p.name))
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// requiredHint says what a missing parameter takes.
func requiredHint(s *argSchema) string {
	if s == nil || len(s.types) != 1 {
		return ""
	}
	return " (" + typeNoun(s.types[0]) + ")"
}

// unknownText refuses a parameter the schema does not have, naming the
// ones it has and the likely one meant.
func unknownText(s *argSchema, path, name string) string {
	what := "unknown parameter " + name
	if path != "" {
		what = path + " has an unknown field " + name
	}
	names := s.names()
	if len(names) == 0 {
		return what + ": it takes none"
	}
	if m := closestName(name, names); m != "" {
		what += " (did you mean " + m + "?)"
	}
	return what + ": the parameters are " + strings.Join(names, ", ")
}

// closestName is the known name a model most likely meant: the same once
// case and separators are ignored (filePath, file-path), one inside the
// other (file_path for path), or an abbreviation (cmd for command).
func closestName(name string, names []string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(s))
	}
	n := norm(name)
	for _, k := range names {
		if norm(k) == n {
			return k
		}
	}
	for _, k := range names {
		if nk := norm(k); len(nk) > 2 && (strings.Contains(n, nk) || strings.Contains(nk, n) && len(n) > 2) {
			return k
		}
	}
	for _, k := range names {
		if nk := norm(k); len(n) > 2 && nk != "" && n[0] == nk[0] && subsequence(n, nk) {
			return k // an abbreviation: cmd for command
		}
	}
	return ""
}

// subsequence reports whether the letters of a appear in b in order.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

// length checks minLength/maxLength (characters) or minItems/maxItems.
func (c *argChecker) length(s *argSchema, n int, path, unit string) {
	switch {
	case s.minLen != nil && n < *s.minLen && *s.minLen == 1:
		c.problem("%s must not be empty", path)
	case s.minLen != nil && n < *s.minLen:
		c.problem("%s must have at least %d %ss, not %d", path, *s.minLen, unit, n)
	case s.maxLen != nil && n > *s.maxLen:
		c.problem("%s must have at most %d %ss, not %d", path, *s.maxLen, unit, n)
	}
}

// bounds checks minimum and maximum.
func (c *argChecker) bounds(s *argSchema, v json.Number, path string) {
	f, _, err := big.ParseFloat(string(v), 10, 128, big.ToNearestEven)
	if err != nil {
		return
	}
	switch {
	case s.min != nil && f.Cmp(s.min) < 0:
		c.problem("%s must be at least %s, not %s", path, s.min.Text('g', -1), v)
	case s.max != nil && f.Cmp(s.max) > 0:
		c.problem("%s must be at most %s, not %s", path, s.max.Text('g', -1), v)
	}
}

func inEnum(enum []json.RawMessage, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	for _, e := range enum {
		if jsonEqual(e, b) {
			return true
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

func enumText(enum []json.RawMessage) string {
	ts := make([]string, len(enum))
	for i, e := range enum {
		var s string
		if json.Unmarshal(e, &s) == nil {
			ts[i] = s
		} else {
			ts[i] = string(e)
		}
	}
	return strings.Join(ts, ", ")
}

// valueText shows a value the model sent, short.
func valueText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		return string(b[:57]) + "…"
	}
	return string(b)
}
