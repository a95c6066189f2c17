package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SchemaOf derives the JSON Schema of a tool's arguments from its Params
// struct, so the two cannot drift apart. Each exported field with a json
// name is a property, in the struct's order; its type follows the Go type
// (string, integer, number, boolean, array, object); a field without
// omitempty is required; no other property is allowed. Tags add the rest:
//
//	jsonschema:"what the model reads about the field"
//	min:"1" max:"600"           bounds of an integer; of a string's length
//	                            (min:"1": not empty); of an array's items
//	enum:"pending,completed"    the only values a string may take
//
// CheckArgs holds every call to its schema, so a tool reads arguments that
// have the fields, types, bounds and values its schema says: it need not
// check them again.
//
// It panics on a type it cannot describe: that is a mistake in a Params
// struct, found by the first test that builds the tool.
//
// The built-in tools' schemas are made at program start, before agentd
// answers the editor's initialize, so the schema writes its JSON itself
// (appendJSON): encoding/json's first Marshal of a type inspects it by
// reflection, which cost more than the rest of agentd's package
// initialisation together. The bytes are encoding/json's
// (TestSchemaOfIsEncodingJSON).
func SchemaOf(params any) json.RawMessage {
	return schemaOfType(reflect.TypeOf(params)).appendJSON(nil)
}

// schema is one node of a JSON Schema, with its properties kept in order.
type schema struct {
	Type                 string      `json:"type"`
	Description          string      `json:"description,omitempty"`
	Enum                 []string    `json:"enum,omitempty"`
	Minimum              *int        `json:"minimum,omitempty"`
	Maximum              *int        `json:"maximum,omitempty"`
	MinLength            *int        `json:"minLength,omitempty"`
	MaxLength            *int        `json:"maxLength,omitempty"`
	MinItems             *int        `json:"minItems,omitempty"`
	MaxItems             *int        `json:"maxItems,omitempty"`
	Items                *schema     `json:"items,omitempty"`
	Properties           *properties `json:"properties,omitempty"`
	Required             []string    `json:"required,omitempty"`
	AdditionalProperties *bool       `json:"additionalProperties,omitempty"`
}

// appendJSON appends the schema as json.Marshal writes it: the fields in
// the struct's order, the empty ones left out, strings escaped alike.
func (s *schema) appendJSON(b []byte) []byte {
	b = append(b, `{"type":`...)
	b = appendJSONString(b, s.Type)
	if s.Description != "" {
		b = append(b, `,"description":`...)
		b = appendJSONString(b, s.Description)
	}
	if len(s.Enum) > 0 {
		b = append(b, `,"enum":[`...)
		for i, e := range s.Enum {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, e)
		}
		b = append(b, ']')
	}
	for _, n := range []struct {
		key string
		v   *int
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}, {"minLength", s.MinLength}, {"maxLength", s.MaxLength},
		{"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if n.v != nil {
			b = append(b, `,"`...)
			b = append(b, n.key...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, int64(*n.v), 10)
		}
	}
	if s.Items != nil {
		b = append(b, `,"items":`...)
		b = s.Items.appendJSON(b)
	}
	if s.Properties != nil {
		b = append(b, `,"properties":{`...)
		for i, p := range *s.Properties {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, p.name)
			b = append(b, ':')
			b = p.schema.appendJSON(b)
		}
		b = append(b, '}')
	}
	if len(s.Required) > 0 {
		b = append(b, `,"required":[`...)
		for i, r := range s.Required {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, r)
		}
		b = append(b, ']')
	}
	if s.AdditionalProperties != nil {
		b = append(b, `,"additionalProperties":`...)
		b = strconv.AppendBool(b, *s.AdditionalProperties)
	}
	return append(b, '}')
}

// appendJSONString quotes v as encoding/json does, HTML's characters
// escaped too.
func appendJSONString(b []byte, v string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(v); {
		if c := v[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, v[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, v[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, v[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, v[start:]...)
	return append(b, '"')
}

type property struct {
	name   string
	schema *schema
}

// properties marshal in the order of the struct's fields (encoding/json's
// way, which TestSchemaOfIsEncodingJSON holds appendJSON to).
type properties []property

func (ps properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.name)
		v, err := json.Marshal(p.schema)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func schemaOfType(t reflect.Type) *schema {
	switch t.Kind() {
	case reflect.String:
		return &schema{Type: "string"}
	case reflect.Bool:
		return &schema{Type: "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &schema{Type: "integer"}
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}
	case reflect.Slice, reflect.Array:
		return &schema{Type: "array", Items: schemaOfType(t.Elem())}
	case reflect.Pointer:
		return schemaOfType(t.Elem())
	case reflect.Struct:
		return schemaOfStruct(t)
	}
	panic(fmt.Sprintf("tools: no JSON Schema for a %s", t))
}

func schemaOfStruct(t reflect.Type) *schema {
	s := &schema{Type: "object", Properties: &properties{}, AdditionalProperties: new(bool)}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		p := schemaOfType(f.Type)
		p.Description = f.Tag.Get("jsonschema")
		lo, hi := bound(f, "min"), bound(f, "max")
		switch p.Type {
		case "string":
			p.MinLength, p.MaxLength = lo, hi
		case "array":
			p.MinItems, p.MaxItems = lo, hi
		default:
			p.Minimum, p.Maximum = lo, hi
		}
		if enum := f.Tag.Get("enum"); enum != "" {
			p.Enum = strings.Split(enum, ",")
		}
		*s.Properties = append(*s.Properties, property{name, p})
		if !strings.Contains(","+opts+",", ",omitempty,") {
			s.Required = append(s.Required, name)
		}
	}
	return s
}

func bound(f reflect.StructField, tag string) *int {
	v := f.Tag.Get(tag)
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(fmt.Sprintf("tools: field %s: %s:%q is not a whole number", f.Name, tag, v))
	}
	return &n
}
