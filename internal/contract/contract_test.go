package contract

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type color string

type base struct {
	ID string `json:"id"`
}

// widget is a thing for the test.
type widget struct {
	base
	// Name is its name.
	Name    string            `json:"name"`
	Color   color             `json:"color,omitempty"`
	Parts   []part            `json:"parts"`
	Tags    map[string]bool   `json:"tags,omitempty"`
	When    time.Time         `json:"when"`
	Raw     json.RawMessage   `json:"raw,omitempty" contract:"part"`
	Maybe   *part             `json:"maybe"`
	skipped int               //nolint:unused // unexported: not on the wire
	Hidden  string            `json:"-"`
	Inline  struct{ N int }   `json:"inline"`
	Nested  map[string][]part `json:"nested,omitempty"`
}

type part struct {
	Size float64 `json:"size"`
}

type loud struct{}

func (loud) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

func build(t *testing.T, register func(b *Builder), roots ...any) (*Contract, error) {
	t.Helper()
	b := NewBuilder("../..", "github.com/agentd/agentd")
	register(b)
	c := &Contract{Methods: map[string]Method{}}
	for i, r := range roots {
		ty := b.Type(reflect.TypeOf(r))
		c.Methods["m"+string(rune('a'+i))] = Method{Direction: Request, Key: "M", Params: &ty}
	}
	return c, b.Describe(c)
}

func TestStructsAsJSONSeesThem(t *testing.T) {
	c, err := build(t, func(b *Builder) {
		b.Enum(color(""), "Color", "colors", []string{"red", "blue"})
		b.Union(part{})
		b.Rename(widget{}, "Widget")
		b.Rename(part{}, "part")
	}, widget{})
	if err != nil {
		t.Fatal(err)
	}
	w := c.Types["Widget"]
	if w.Doc != "Widget is a thing for the test." {
		t.Errorf("doc %q: the Go name is replaced by the contract's", w.Doc)
	}
	got := map[string]Field{}
	var order []string
	for _, f := range w.Fields {
		got[f.Name] = f
		order = append(order, f.Name)
	}
	if want := "id name color parts tags when raw maybe inline nested"; strings.Join(order, " ") != want {
		t.Errorf("fields %v, want %s (embedded flattened first, unexported and json:\"-\" left out)", order, want)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"name doc", got["name"].Doc == "Name is its name."},
		{"omitempty is optional", got["color"].Optional && !got["name"].Optional},
		{"enum ref", got["color"].Type.Kind == KindRef && got["color"].Type.Ref == "Color"},
		{"array of ref", got["parts"].Type.Kind == KindArray && got["parts"].Type.Of.Ref == "part"},
		{"map", got["tags"].Type.Kind == KindMap && got["tags"].Type.Of.Kind == KindBoolean},
		{"time", got["when"].Type.Kind == KindString && got["when"].Type.Format == "date-time"},
		{"tagged raw", got["raw"].Type.Kind == KindRef && got["raw"].Type.Ref == "part"},
		{"pointer nullable", got["maybe"].Type.Nullable},
		{"inline object", got["inline"].Type.Kind == KindObject && got["inline"].Type.Fields[0].Name == "N"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %+v", c.name, w.Fields)
		}
	}
	if e := c.Enums["Color"]; e.List != "colors" || len(e.Values) != 2 {
		t.Errorf("enum %+v", e)
	}
	ts := string(TypeScript(c))
	for _, want := range []string{"export const COLORS = ['red', 'blue'] as const;", "export type Color = (typeof COLORS)[number];",
		"export interface Widget {", "  color?: Color;", "  maybe: part | null;", "  inline: { N: number };",
		"  nested?: Record<string, part[]>;", "/** Name is its name. */"} {
		if !strings.Contains(ts, want) {
			t.Errorf("TypeScript lacks %q:\n%s", want, ts)
		}
	}
	lua := string(Lua(c))
	for _, want := range []string{"M.colors = { 'red', 'blue' }", "---@alias agentd.Color 'red'|'blue'", "---@class agentd.Widget",
		"---@field color? agentd.Color", "---@field maybe agentd.part|nil", "---@field name string Name is its name."} {
		if !strings.Contains(lua, want) {
			t.Errorf("Lua lacks %q:\n%s", want, lua)
		}
	}
}

// What the builder cannot describe faithfully fails, never guesses.
func TestBuilderRefusesToGuess(t *testing.T) {
	_, err := build(t, func(*Builder) {}, struct {
		C color `json:"c"`
		L loud  `json:"l"`
	}{}, widget{})
	for _, want := range []string{"contract.color is a named string type without registered values", "contract.loud has a MarshalJSON of its own",
		"contract tag names part, which is not registered"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	type other struct{}
	_, err = build(t, func(b *Builder) {
		b.Rename(other{}, "part")
	}, struct {
		A other `json:"a"`
		B part  `json:"b"`
	}{})
	if err == nil || !strings.Contains(err.Error(), "are both named part") {
		t.Errorf("a name taken twice: %v", err)
	}
}

func TestKeys(t *testing.T) {
	for in, want := range map[string][2]string{"Run": {"run", "run"}, "MCPStatus": {"mcpStatus", "mcp_status"},
		"InputRequest": {"inputRequest", "input_request"}, "DidOpen": {"didOpen", "did_open"}, "ID": {"id", "id"}} {
		if got := [2]string{lowerFirst(in), snake(in)}; got != want {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
	if got := screaming("promptKinds"); got != "PROMPT_KINDS" {
		t.Errorf("screaming: %s", got)
	}
}
