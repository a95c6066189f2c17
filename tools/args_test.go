package tools

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckArgs: arguments are held to the schema SchemaOf derives, with
// every problem named in the schema's words.
func TestCheckArgs(t *testing.T) {
	type step struct {
		Name  string `json:"name"`
		State string `json:"state" enum:"todo,done"`
	}
	type params struct {
		Path  string   `json:"path" min:"1"`
		Depth int      `json:"depth,omitempty" min:"1" max:"5"`
		Tags  []string `json:"tags,omitempty" max:"2"`
		Steps []step   `json:"steps,omitempty"`
		Flag  bool     `json:"flag,omitempty"`
	}
	schema := SchemaOf(params{})
	for args, want := range map[string]string{
		`{"path":"a"}`: "",
		`{"path":"a","depth":5,"tags":["x"],"flag":true}`:    "",
		`{"path":"a","depth":3.0}`:                           "", // an integer in JSON's sense
		`{"path":"a","steps":[{"name":"n","state":"done"}]}`: "",
		`{}`:                                "path is required (a string)",
		``:                                  "path is required (a string)",
		`null`:                              "path is required (a string)",
		`{"path":""}`:                       "path must not be empty",
		`{"file_path":"a"}`:                 "path is required (a string); unknown parameter file_path (did you mean path?): the parameters are path, depth, tags, steps, flag",
		`{"path":"a","Depth":2}`:            "unknown parameter Depth (did you mean depth?): the parameters are path, depth, tags, steps, flag",
		`{"path":"a","depth":0}`:            "depth must be at least 1, not 0",
		`{"path":"a","depth":10}`:           "depth must be at most 5, not 10",
		`{"path":"a","depth":"2"}`:          "depth must be an integer, not a JSON string",
		`{"path":"a","depth":1.5}`:          "depth must be an integer, not a JSON number",
		`{"path":"a","tags":["x","y","z"]}`: "tags must have at most 2 items, not 3",
		`{"path":"a","tags":[1]}`:           "tags[0] must be a string, not a JSON number",
		`{"path":"a","steps":[{"name":"n","state":"later"}]}`: `steps[0].state must be one of todo, done, not "later"`,
		`{"path":"a","steps":[{"state":"todo","x":1}]}`:       "steps[0].name is required (a string); steps[0] has an unknown field x: the parameters are name, state",
		`{"path":"a","flag":"yes"}`:                           "flag must be true or false, not a JSON string",
		`["a"]`:                                               "they must be one JSON object with the parameters the tool's schema lists, not a JSON array",
		`{"path":"a"`:                                         "they are not valid JSON (unexpected end of JSON input); send one JSON object with the parameters the tool's schema lists",
	} {
		err := CheckArgs(schema, json.RawMessage(args))
		if want == "" {
			assert.NoError(t, err, args)
			continue
		}
		if assert.Error(t, err, args) {
			assert.Equal(t, want, err.Error(), args)
		}
	}
}

// TestCheckArgsIgnoresWhatItDoesNotKnow: a server's schema with keywords
// CheckArgs does not read (anyOf, $ref, patternProperties) is checked for
// what it does read and never refuses more than the schema does.
func TestCheckArgsIgnoresWhatItDoesNotKnow(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"r":{"$ref":"#/$defs/x"},"n":{"type":["integer","null"]}},"patternProperties":{"^x-":{}},"additionalProperties":false,
		"required":["q"]}`)
	assert.NoError(t, CheckArgs(schema, json.RawMessage(`{"q":1,"r":{"any":"thing"},"n":null,"x-extra":true,"other":1}`)))
	assert.EqualError(t, CheckArgs(schema, json.RawMessage(`{"n":"x"}`)), "q is required; n must be an integer or null, not a JSON string")
	assert.NoError(t, CheckArgs(json.RawMessage(`not a schema`), json.RawMessage(`{"x":1}`)), "a schema that does not parse checks nothing")
	assert.NoError(t, CheckArgs(nil, json.RawMessage(`{"x":1}`)))
}

// TestPrepareChecksArgsForEveryTool: every built-in tool refuses, before
// it reads them, unknown parameters, missing required ones and values out
// of its schema's bounds, and names them.
func TestPrepareChecksArgsForEveryTool(t *testing.T) {
	env := newEnv(t)
	writeFile(t, env, "a.go", "package a\n")
	for _, tl := range Builtins() {
		name := tl.Info().Name
		_, r := Prepare(t.Context(), tl, env, json.RawMessage(`{"bogus_field":1}`))
		require.NotNil(t, r, name)
		assert.True(t, r.IsError, name)
		assert.Contains(t, r.Output, "invalid arguments: ", name)
		assert.Contains(t, r.Output, "unknown parameter bogus_field", name)
	}
	for _, c := range []struct{ tool, args, want string }{
		{ReadFileToolName, `{"file_path":"a.go"}`, "path is required (a string); unknown parameter file_path (did you mean path?): the parameters are path, offset, limit"},
		{ReadFileToolName, `{"path":""}`, "path must not be empty"},
		{ReadFileToolName, `{"path":"a.go","offset":0}`, "offset must be at least 1, not 0"},
		{ListDirToolName, `{"depth":9}`, "depth must be at most 5, not 9"},
		{RunCmdToolName, `{"command":"ls","timeout":3600}`, "timeout must be at most 600, not 3600"},
		{RunCmdToolName, `{"cmd":"ls"}`, "command is required (a string); unknown parameter cmd (did you mean command?)"},
		{GrepToolName, `{"pattern":""}`, "pattern must not be empty"},
		{GlobFileSearchToolName, `{}`, "pattern is required (a string)"},
		{WriteFileToolName, `{"path":"b.go"}`, "content is required (a string)"},
		{EditFileToolName, `{"path":"a.go","old_string":"a","newString":"b"}`, "new_string is required (a string); unknown parameter newString (did you mean new_string?)"},
		{SearchSemanticToolName, `{"query":"x","limit":50}`, "limit must be at most 20, not 50"},
		{UndoPatchToolName, `{"paths":"a.go"}`, "paths must be an array, not a JSON string"},
	} {
		_, r := prepare(t, env, c.tool, json.RawMessage(c.args))
		require.NotNil(t, r, c.args)
		assert.Contains(t, r.Output, c.want, c.args)
	}
	// Within the schema the tool reads them: defaults for what is absent.
	mustOK(t, call(t, env, ListDirToolName, json.RawMessage(`{}`)))
	mustOK(t, call(t, env, ReadFileToolName, json.RawMessage(`{"path":"a.go","offset":1,"limit":1}`)))
}
