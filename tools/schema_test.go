package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaOf(t *testing.T) {
	type step struct {
		Name  string `json:"name" jsonschema:"What to do."`
		State string `json:"state" enum:"todo,done"`
	}
	type params struct {
		Path    string   `json:"path" min:"1" jsonschema:"A path."`
		Depth   int      `json:"depth,omitempty" min:"1" max:"5"`
		Score   float64  `json:"score,omitempty"`
		Tags    []string `json:"tags,omitempty" max:"3"`
		Steps   []step   `json:"steps"`
		Flag    *bool    `json:"flag,omitempty"`
		Ignored string   `json:"-"`
		hidden  string
	}
	want := `{"type":"object","properties":{` +
		`"path":{"type":"string","description":"A path.","minLength":1},` +
		`"depth":{"type":"integer","minimum":1,"maximum":5},` +
		`"score":{"type":"number"},` +
		`"tags":{"type":"array","items":{"type":"string"},"maxItems":3},` +
		`"steps":{"type":"array","items":{"type":"object","properties":{` +
		`"name":{"type":"string","description":"What to do."},"state":{"type":"string","enum":["todo","done"]}},` +
		`"required":["name","state"],"additionalProperties":false}},` +
		`"flag":{"type":"boolean"}},` +
		`"required":["path","steps"],"additionalProperties":false}`
	assert.JSONEq(t, want, string(SchemaOf(params{hidden: ""})))
	assert.Equal(t, `{"type":"object","properties":{"path"`, string(SchemaOf(params{}))[:37], "properties keep the struct's order")
	assert.Panics(t, func() { SchemaOf(struct{ M map[string]int }{}) }, "a type with no schema is a mistake")
}

// TestSchemaOfIsEncodingJSON holds SchemaOf's own JSON writer to the bytes
// encoding/json writes for the same schema, for every built-in tool's
// parameters and for descriptions and enums that need escaping.
func TestSchemaOfIsEncodingJSON(t *testing.T) {
	type odd struct {
		Quote string   `json:"quote" jsonschema:"Say \"hi\" <b>&</b> \\ tab\there, é, \u2028, \u007f."`
		Enum  string   `json:"enum,omitempty" enum:"a<b,c&d,e\"f"`
		List  []int    `json:"list,omitempty" min:"0" max:"9"`
		Deep  [][]bool `json:"deep"`
		Ctrl  string   `json:"ctrl,omitempty" jsonschema:"\b\f\n\r\x01\x1f \xff\xfe \u2029 \U0001F600 ' end"`
	}
	for _, params := range []any{odd{}, ReadFileParams{}, WriteFileParams{}, SearchSemanticParams{}, WebSearchParams{},
		GrepParams{}, ApplyPatchParams{}, EditFileParams{}, FindReferencesParams{}, WebFetchParams{}, SymbolParams{},
		ProcessParams{}, UndoPatchParams{}, RunCmdParams{}, GlobFileSearchParams{}, ListDirParams{}} {
		want, err := json.Marshal(schemaOfType(reflect.TypeOf(params)))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(SchemaOf(params)), "%T", params)
	}
}
