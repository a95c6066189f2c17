package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
