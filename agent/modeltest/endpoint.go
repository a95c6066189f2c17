package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
)

// SetEndpoint sets what the server says of its models (see Endpoint).
func (s *Server) SetEndpoint(e Endpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Models = append([]ModelEntry(nil), e.Models...)
	s.endpoint = e
}

func (s *Server) endpointNow() Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.endpoint
}

// handleProps answers as llama.cpp's server does: n_ctx is the window it
// runs with.
func (s *Server) handleProps(w http.ResponseWriter, _ *http.Request) {
	e := s.endpointNow()
	if e.PropsNCtx == 0 {
		writeError(w, http.StatusNotFound, "fakemodel: no /props (not llama.cpp)")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": e.PropsNCtx, "params": map[string]any{}},
		"total_slots":                 1,
		"model_path":                  "/models/fake.gguf",
	})
}

// handleOllamaPS answers as Ollama's /api/ps does, listing loaded models.
func (s *Server) handleOllamaPS(w http.ResponseWriter, _ *http.Request) {
	e := s.endpointNow()
	if e.OllamaLoaded == 0 {
		writeError(w, http.StatusNotFound, "fakemodel: no /api/ps (not Ollama)")
		return
	}
	type loaded struct {
		Name          string `json:"name"`
		Model         string `json:"model"`
		ContextLength int    `json:"context_length"`
	}
	names := []string{"fakemodel"}
	if len(e.Models) > 0 {
		names = names[:0]
		for _, m := range e.Models {
			names = append(names, m.ID)
		}
	}
	out := struct {
		Models []loaded `json:"models"`
	}{}
	for _, n := range names {
		out.Models = append(out.Models, loaded{Name: n, Model: n, ContextLength: e.OllamaLoaded})
	}
	writeJSON(w, http.StatusOK, out)
}

// handleOllamaShow answers as Ollama's /api/show does for any model name.
func (s *Server) handleOllamaShow(w http.ResponseWriter, r *http.Request) {
	e := s.endpointNow()
	if e.OllamaContextLength == 0 && e.OllamaNumCtx == 0 {
		writeError(w, http.StatusNotFound, "fakemodel: no /api/show (not Ollama)")
		return
	}
	var in struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if json.Unmarshal(body, &in) != nil || in.Model+in.Name == "" {
		writeError(w, http.StatusBadRequest, "fakemodel: /api/show needs a model")
		return
	}
	params := "temperature 0.7\nstop \"<|im_end|>\""
	if e.OllamaNumCtx > 0 {
		params = fmt.Sprintf("num_ctx %d\n%s", e.OllamaNumCtx, params)
	}
	info := map[string]any{"general.architecture": "llama"}
	if e.OllamaContextLength > 0 {
		info["llama.context_length"] = e.OllamaContextLength
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"modelfile":  "FROM fake",
		"parameters": params,
		"details":    map[string]any{"family": "llama", "parameter_size": "7B"},
		"model_info": info,
	})
}

// chaos is Chaos with its random source.
type chaos struct {
	Chaos
	rng *rand.Rand
}

// SetChaos makes the server fail requests at random (see Chaos); the zero
// Chaos stops it.
func (s *Server) SetChaos(c Chaos) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c == (Chaos{}) {
		s.chaos = nil
		return
	}
	seed := c.Seed
	if seed == 0 {
		seed = rand.Uint64()
	}
	s.chaos = &chaos{Chaos: c, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// fault draws whether chaos fails req, and how. A failed request is
// recorded with the fault as its turn and consumes no turn.
func (s *Server) fault(req *Request) *Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chaos
	if c == nil {
		return nil
	}
	x := c.rng.Float64()
	var reply Reply
	var kind string
	switch {
	case x < c.Status500:
		kind, reply = "500", Reply{Status: http.StatusInternalServerError, Body: "chaos: upstream failed"}
	case x < c.Status500+c.Status429:
		after := c.RetryAfter
		if after == "" {
			after = "1"
		}
		kind, reply = "429", Reply{Status: http.StatusTooManyRequests, Body: "chaos: slow down", Headers: map[string]string{"Retry-After": after}}
	case x < c.Status500+c.Status429+c.Cut:
		kind, reply = "cut", Reply{Cut: true, ToolCalls: []ToolCall{{Name: "read_file", RawArguments: `{"pa`}}}
	case x < c.Status500+c.Status429+c.Cut+c.Stall:
		kind, reply = "stall", Reply{Stall: true}
	default:
		return nil
	}
	req.Seq = len(s.requests) + 1
	req.TurnIndex = -1
	req.Turn = "chaos:" + kind
	s.requests = append(s.requests, *req)
	return &reply
}
