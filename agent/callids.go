package agent

import (
	"fmt"

	"github.com/agentd/agentd/internal/lazy"
)

// A call's id is how everything after the model's reply tells its calls
// apart: the call a confirmation asks about, the call an approval lets run,
// the result that goes back to the model, the tool call an editor shows. A
// model (or a hostile endpoint) that gives two calls of a reply the same id,
// or reuses one of an earlier reply, would let the user's answer about one
// call reach the other: an approval of a harmless command run a rejected
// one, with the sandbox or the network granted for the first. So before a
// reply's calls go anywhere, each gets an id no other call of the
// conversation has: the model's own when it is, one agentd makes otherwise.

// renamedCall is a call whose id agentd replaced.
type renamedCall struct{ was, now string }

// mistralID is the shape some servers require of every id they are sent
// back (nine letters and digits): a made id keeps it.
var mistralID = lazy.Regexp(`^[A-Za-z0-9]{9}$`)

// uniqueCallIDs returns calls with ids unique among themselves and the
// calls and results of history, and the ones it renamed.
func uniqueCallIDs(history []Message, calls []ToolCall) ([]ToolCall, []renamedCall) {
	seen := map[string]bool{}
	for _, m := range history {
		for _, c := range m.ToolCalls {
			seen[c.ID] = true
		}
		if m.ToolCallID != "" {
			seen[m.ToolCallID] = true
		}
	}
	var renamed []renamedCall
	out := make([]ToolCall, len(calls))
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			id := madeCallID(c.ID, seen)
			renamed = append(renamed, renamedCall{was: c.ID, now: id})
			c.ID = id
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out, renamed
}

// madeCallID makes an id for a call whose own is taken: the model's id and
// a number, in the model's shape where it has one.
func madeCallID(was string, seen map[string]bool) string {
	for n := 2; ; n++ {
		var id string
		switch {
		case mistralID().MatchString(was) && n < 100:
			id = fmt.Sprintf("%s%02d", was[:7], n)
		case was == "":
			id = fmt.Sprintf("call_%d", n)
		default:
			id = fmt.Sprintf("%s_%d", was, n)
		}
		if !seen[id] {
			return id
		}
	}
}
