package acp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/tools"
)

// A web fetch asks as a fetch (not as a command: it runs none), and its
// tool call ends titled with what it got: the URL it ended
// at, its size and its type (issue 27: clients show the fetched URL with
// its size); a page that failed says its status, a page cut says so.
func TestFetchedPageNamedByItsTitle(t *testing.T) {
	page := "<html><head><title>Cart API</title></head><body><h1>Cart API</h1><p>" + strings.Repeat("Totals are in cents. ", 200) + "</p></body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	modelURL := script(t, fmt.Sprintf(`{"turns": [
  {"match": {"lastUser": "read the docs"}, "reply": {"toolCalls": [{"id": "call_f", "name": "web_fetch", "arguments": {"url": %q}}]}},
  {"match": {"afterTool": "web_fetch"}, "reply": {"text": "Totals are in cents."}}
]}`, srv.URL+"/docs"))
	h := start(t, config{stateDir: t.TempDir(), modelURL: modelURL, policy: tools.ModeFullAuto})
	h.client.setPermission(func(p acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionResponse {
		return selected(tools.AllowOnce)
	})
	id := h.newSession(t.TempDir())
	if stop := h.prompt(id, "read the docs of the cart"); stop != acpsdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q, the chat:\n%s", stop, h.client.text(id))
	}
	// the permission asked is a fetch's: its kind, the request's title and
	// message, no command line (it runs none)
	p := <-h.client.asked
	if p.ToolCall.Kind == nil || *p.ToolCall.Kind != acpsdk.ToolKindFetch || p.ToolCall.Title == nil || *p.ToolCall.Title != "Fetch "+srv.URL+"/docs" {
		t.Fatalf("the permission's tool call: %+v", p.ToolCall)
	}
	var texts []string
	for _, c := range p.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			texts = append(texts, c.Content.Content.Text.Text)
		}
	}
	if all := strings.Join(texts, "\n"); !strings.Contains(all, "on this machine or a private network") || strings.Contains(all, "```sh") {
		t.Fatalf("the permission's content: %q", all)
	}
	want := fmt.Sprintf("fetch %s/docs · %d KB · text/html", srv.URL, len(page)>>10)
	var titles []string
	for _, u := range h.client.of(id) {
		if tc := u.ToolCallUpdate; tc != nil && tc.ToolCallId == "call_f" && tc.Title != nil {
			titles = append(titles, *tc.Title)
		}
	}
	if len(titles) != 1 || titles[0] != want {
		t.Fatalf("the fetch's final title: want %q, got %q", want, titles)
	}
}

func TestFetchedTitleSaysAFailureAndACut(t *testing.T) {
	for _, c := range []struct {
		f    tools.Fetched
		want string
	}{
		{tools.Fetched{URL: "https://example.com/gone", Status: 404, ContentType: "text/html", Bytes: 512}, "fetch https://example.com/gone · HTTP 404 · 512 bytes · text/html"},
		{tools.Fetched{URL: "https://example.com/big", Status: 200, ContentType: "text/plain", Bytes: 10 << 20, Cut: true}, "fetch https://example.com/big · 10.0 MB read, the rest cut · text/plain"},
	} {
		tr := newTranslator("/ws", 0, nil)
		tr.translate(agent.Update{Kind: agent.UpdateToolCall, ToolCallID: "call_f", Title: "fetch " + c.f.URL, ToolKind: tools.KindFetch, Status: agent.StatusPending})
		f := c.f
		us := tr.translate(agent.Update{Kind: agent.UpdateToolCallUpdate, ToolCallID: "call_f", Status: agent.StatusCompleted, Output: "page", Fetched: &f})
		if len(us) != 1 || us[0].ToolCallUpdate == nil || us[0].ToolCallUpdate.Title == nil || *us[0].ToolCallUpdate.Title != c.want {
			t.Fatalf("want the title %q, got %+v", c.want, us)
		}
	}
}
