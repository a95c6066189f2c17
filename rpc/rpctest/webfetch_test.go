package rpctest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/agent/modeltest"
	"github.com/agentd/agentd/tools"
)

// webSite is a local web server: an HTML page, a redirect to another host
// name of this machine (localhost, where the first request used
// 127.0.0.1), and a 20 MB page. It counts the requests each path got.
type webSite struct {
	*httptest.Server
	port string
	mu   sync.Mutex
	hits map[string]int
	big  atomic.Int64 // bytes of /big sent
	// bigDone: /big was written to its end. The page is larger than the
	// kernel's socket buffers can take in (this machine's receive buffer
	// grows to 32 MB), so only a client that reads it whole lets it end.
	bigDone atomic.Bool
}

func startWebSite(t *testing.T) *webSite {
	s := &webSite{hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Cart docs</title><script>alert("x")</script></head><body>
<h1>Cart API</h1><p>Call <code>Total(items)</code> to get the <b>sum in cents</b>.</p>
<ul><li>rounding: half even</li><li><a href="/more">more</a></li></ul></body></html>`)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+s.port+"/docs", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := strings.Repeat("x", 99) + "\n"
		for range 1_000_000 { // 100 MB
			n, err := fmt.Fprint(w, line)
			s.big.Add(int64(n))
			if err != nil {
				return
			}
		}
		s.bigDone.Store(true)
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	t.Cleanup(s.Close)
	return s
}

func (s *webSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func fetchCall(url string, offset int) modeltest.ToolCall {
	args := fmt.Sprintf(`{"url": %q}`, url)
	if offset > 0 {
		args = fmt.Sprintf(`{"url": %q, "offset": %d}`, url, offset)
	}
	return modeltest.ToolCall{Name: "web_fetch", RawArguments: args}
}

// web_fetch asks before the first request to a host, even in full-auto for
// a host on this machine; follows a redirect to another host only once that
// host is allowed (otherwise the model is told, and fetching it asks
// again); turns HTML into Markdown marked as untrusted; cuts a 20 MB page
// with a note; and keeps the session's pages, so reading on fetches nothing.
func TestWebFetch(t *testing.T) {
	var sites sync.Map // test name → *webSite: one per mode, as both run at once
	both(t, func(t *testing.T) Config {
		site := startWebSite(t)
		sites.Store(t.Name(), site)
		first, second := "http://127.0.0.1:"+site.port, "http://localhost:"+site.port
		return Config{Policy: tools.ModeFullAuto, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "read the docs"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall(first+"/moved", 0)}}},
			{Match: modeltest.Match{LastTool: "Not followed"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall(second+"/docs", 0)}}},
			{Match: modeltest.Match{LastTool: "Cart API"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall(first+"/big", 0)}}},
			{Match: modeltest.Match{LastTool: "only its start was read"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall(first+"/big", 16000)}}},
			{Match: modeltest.Match{AfterTool: "web_fetch"}, Reply: modeltest.Reply{Text: "Totals are in cents."}},
		}}}
	}, func(t *testing.T, env *Env) {
		v, _ := sites.Load(t.Name())
		site := v.(*webSite)
		first, second := "http://127.0.0.1:"+site.port, "http://localhost:"+site.port
		e := env.StartInitialized()
		var asked []agent.InputRequest
		var mu sync.Mutex
		e.Respond(agent.KindConfirmCommand, func(req agent.InputRequest) (string, any) {
			mu.Lock()
			asked = append(asked, req)
			mu.Unlock()
			return Decide(req.RequestID, tools.AllowSession, "")
		})
		run := e.Run(agent.RunParams{Prompt: "read the docs of the cart"})
		st := e.Finished(run.RunID)
		require.Equal(t, agent.StateCompleted, st.State, st.Error)

		mu.Lock()
		defer mu.Unlock()
		require.Len(t, asked, 2, "once for 127.0.0.1, once for localhost; the session's later fetches of 127.0.0.1 ask nothing")
		assert.Equal(t, "Fetch "+first+"/moved", asked[0].Title)
		assert.Contains(t, asked[0].Message, "on this machine or a private network")
		assert.Equal(t, "Fetch "+second+"/docs", asked[1].Title)

		reqs := env.Model.Requests()
		require.Len(t, reqs, 5)
		assert.Contains(t, reqs[0].Tools, "web_fetch")
		assert.NotContains(t, reqs[0].Tools, "web_search", "no search service, no search tool")
		redirect := reqs[1].Last().Content
		assert.Contains(t, redirect, "Not followed: "+first+"/moved redirects to "+second+"/docs, a host the user has not allowed")
		assert.Equal(t, 0, site.count("/docs")-1, "the redirect was not followed: /docs was fetched once, by the second call")

		page := reqs[2].Last().Content
		assert.Contains(t, page, "[agentd: fetched "+second+"/docs (200 text/html")
		assert.Contains(t, page, "untrusted content from the web")
		assert.Contains(t, page, "# Cart API")
		assert.Contains(t, page, "**sum in cents**")
		assert.Contains(t, page, "`Total(items)`")
		assert.Contains(t, page, "- rounding: half even")
		assert.Contains(t, page, "("+second+"/more)", "links are made absolute")
		assert.NotContains(t, page, "alert(")

		big := reqs[3].Last().Content
		assert.Contains(t, big, "the page is larger than 10.0 MB and only its start was read")
		assert.Contains(t, big, "to read on, call web_fetch with the same url and offset")
		assert.Less(t, len(big), 20_000, "one window of the page")
		assert.False(t, site.bigDone.Load(), "the server was cut off, not read to the end (%d bytes sent)", site.big.Load())
		assert.Contains(t, reqs[4].Last().Content, "this shows bytes 16000-")
		assert.Equal(t, 1, site.count("/big"), "reading on comes from the session's copy")

		// The editor sees the URL and the size of each fetch.
		var fetched []*tools.Fetched
		for _, u := range e.Updates(run.RunID) {
			if u.Kind == agent.UpdateToolCallUpdate && u.Fetched != nil {
				fetched = append(fetched, u.Fetched)
			}
		}
		require.Len(t, fetched, 3)
		assert.Equal(t, second+"/docs", fetched[0].URL)
		assert.Equal(t, 200, fetched[0].Status)
		assert.True(t, fetched[1].Cut)
		assert.Equal(t, 10<<20, fetched[1].Bytes)
	})
}

// In read-only mode web_fetch is refused without asking; in ask mode a
// rejected host is not fetched.
func TestWebFetchRefused(t *testing.T) {
	for _, mode := range []tools.Mode{tools.ModeReadOnly, tools.ModeAsk} {
		t.Run(string(mode), func(t *testing.T) {
			var sites sync.Map
			both(t, func(t *testing.T) Config {
				site := startWebSite(t)
				sites.Store(t.Name(), site)
				url := "http://127.0.0.1:" + site.port + "/docs"
				return Config{Policy: mode, Script: &modeltest.Script{Turns: []modeltest.Turn{
					{Match: modeltest.Match{LastUser: "read"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall(url, 0)}}},
					{Match: modeltest.Match{AfterTool: "web_fetch"}, Reply: modeltest.Reply{Text: "Could not read it."}},
				}}}
			}, func(t *testing.T, env *Env) {
				v, _ := sites.Load(t.Name())
				site := v.(*webSite)
				e := env.StartInitialized()
				asked := 0
				e.Respond(agent.KindConfirmCommand, func(req agent.InputRequest) (string, any) {
					asked++
					return Decide(req.RequestID, tools.RejectOnce, "not that one")
				})
				run := e.Run(agent.RunParams{Prompt: "read the docs"})
				require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
				assert.Equal(t, 0, site.count("/docs"), "nothing was fetched")
				last := env.Model.Requests()[1].Last().Content
				if mode == tools.ModeReadOnly {
					assert.Equal(t, 0, asked)
					assert.Contains(t, last, "read-only mode refuses network access")
				} else {
					assert.Equal(t, 1, asked)
					assert.Contains(t, last, "not that one")
				}
			})
		})
	}
}

// With a search service configured the model is offered web_search; the
// query goes to the service once the user allows its host, and the results
// come back as a list. Without one (TestWebFetch) no search tool is offered.
func TestWebSearch(t *testing.T) {
	var queries atomic.Value
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries.Store(r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query": "x", "results": [
			{"title": "Cart rounding - docs", "url": "https://docs.example/cart#rounding", "content": "Totals round half even."},
			{"title": "Issue 42: negative totals", "url": "https://git.example/cart/issues/42", "content": "Fixed in   v2.\n"}]}`)
	}))
	t.Cleanup(searx.Close)
	both(t, func(t *testing.T) Config {
		return Config{Policy: tools.ModeFullAuto, Env: map[string]string{"AGENTD_WEB_SEARCH_URL": searx.URL + "/search"},
			Script: &modeltest.Script{Turns: []modeltest.Turn{
				{Match: modeltest.Match{LastUser: "how does the cart round"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{
					{Name: "web_search", RawArguments: `{"query": "cart rounding half even"}`}}}},
				{Match: modeltest.Match{AfterTool: "web_search"}, Reply: modeltest.Reply{Text: "Half even."}},
			}}}
	}, func(t *testing.T, env *Env) {
		e := env.StartInitialized()
		e.Respond(agent.KindConfirmCommand, func(req agent.InputRequest) (string, any) {
			return Decide(req.RequestID, tools.AllowOnce, "")
		})
		run := e.Run(agent.RunParams{Prompt: "how does the cart round totals?"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		reqs := env.Model.Requests()
		require.Len(t, reqs, 2)
		assert.Contains(t, reqs[0].Tools, "web_search")
		out := reqs[1].Last().Content
		assert.Contains(t, out, "1. Cart rounding - docs\n   https://docs.example/cart#rounding\n   Totals round half even.")
		assert.Contains(t, out, "2. Issue 42: negative totals\n   https://git.example/cart/issues/42\n   Fixed in v2.")
		assert.Contains(t, queries.Load(), "q=cart+rounding+half+even")
		assert.Contains(t, queries.Load(), "format=json")
	})
}

// Where no one can approve, a fetch from this machine is refused in words
// that name the host, even in full-auto.
func TestWebFetchNobodyToAsk(t *testing.T) {
	var sites sync.Map
	both(t, func(t *testing.T) Config {
		site := startWebSite(t)
		sites.Store(t.Name(), site)
		return Config{Policy: tools.ModeFullAuto, Script: &modeltest.Script{Turns: []modeltest.Turn{
			{Match: modeltest.Match{LastUser: "read"}, Reply: modeltest.Reply{ToolCalls: []modeltest.ToolCall{fetchCall("http://127.0.0.1:"+site.port+"/docs", 0)}}},
			{Match: modeltest.Match{AfterTool: "web_fetch"}, Reply: modeltest.Reply{Text: "Could not read it."}},
		}}}
	}, func(t *testing.T, env *Env) {
		v, _ := sites.Load(t.Name())
		e := env.Start()
		e.MustCall("initialize", env.InitializeParams([]string{string(agent.KindQuestion)}), nil)
		e.Notify("initialized", struct{}{})
		run := e.Run(agent.RunParams{Prompt: "read the docs"})
		require.Equal(t, agent.StateCompleted, e.Finished(run.RunID).State)
		assert.Equal(t, 0, v.(*webSite).count("/docs"))
		assert.Contains(t, env.Model.Requests()[1].Last().Content,
			"Not run: a request to 127.0.0.1 (on this machine or a private network, which only the user can allow) needs the user's approval")
	})
}
