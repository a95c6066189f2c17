package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUniqueCallIDs: ids a reply repeats, or takes from an earlier call of
// the conversation, are replaced; a unique id is kept as the model gave it,
// and a made one keeps a nine-character id's shape (some servers require it).
func TestUniqueCallIDs(t *testing.T) {
	history := []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_0"}, {ID: "aB3dE6gH9"}}},
		{Role: RoleTool, ToolCallID: "call_0"},
		{Role: RoleTool, ToolCallID: "aB3dE6gH9"},
	}
	calls, renamed := uniqueCallIDs(history, []ToolCall{{ID: "call_0"}, {ID: "call_x"}, {ID: "call_x"}, {ID: "aB3dE6gH9"}, {ID: "call_0"}})
	var ids []string
	for _, c := range calls {
		ids = append(ids, c.ID)
	}
	assert.Equal(t, []string{"call_0_2", "call_x", "call_x_2", "aB3dE6g02", "call_0_3"}, ids)
	assert.Equal(t, []renamedCall{{"call_0", "call_0_2"}, {"call_x", "call_x_2"}, {"aB3dE6gH9", "aB3dE6g02"}, {"call_0", "call_0_3"}}, renamed)

	calls, renamed = uniqueCallIDs(history, []ToolCall{{ID: "call_1"}})
	assert.Equal(t, "call_1", calls[0].ID)
	assert.Empty(t, renamed)
}
