package rpc

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
)

// TestInitializeOptionsAreTheEditorSettings keeps wire.InitializeOptions,
// the documented shape of initializationOptions, equal to the settings an
// editor may set, which is what initialize reads.
func TestInitializeOptionsAreTheEditorSettings(t *testing.T) {
	var documented []string
	jsonKeys("", reflect.TypeOf(wire.InitializeOptions{}), &documented)
	var editor []string
	for _, s := range agent.Settings() {
		if s.Editor {
			editor = append(editor, s.Key)
		}
	}
	slices.Sort(documented)
	slices.Sort(editor)
	assert.Equal(t, editor, documented)
}

func jsonKeys(prefix string, t reflect.Type, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		key := prefix + name
		if ft := f.Type; ft.Kind() == reflect.Struct || ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			jsonKeys(key+".", ft, out)
			continue
		}
		*out = append(*out, key)
	}
}

func TestNoParams(t *testing.T) {
	for _, p := range []string{"", "null", "[]", "[null]", " [ null ] "} {
		var v struct{ RunID string }
		assert.NoError(t, decode([]byte(p), &v), "%q", p)
	}
	var v struct{ RunID string }
	assert.Error(t, decode([]byte(`[1]`), &v))
	assert.Error(t, decode([]byte(`{"RunID":1}`), &v))
}
