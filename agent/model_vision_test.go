package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestVisionFromTheEndpoint(t *testing.T) {
	cases := []struct {
		name    string
		routes  map[string]string
		model   string
		setting string
		want    bool
	}{
		{"llama.cpp says yes", map[string]string{"/props": `{"modalities": {"vision": true}}`}, "local", "", true},
		{"llama.cpp says no, despite the name", map[string]string{"/props": `{"modalities": {"vision": false}}`}, "gpt-4o", "", false},
		{"ollama capabilities", map[string]string{"/api/show": `{"capabilities": ["completion", "vision"]}`}, "gemma3:4b", "", true},
		{"ollama without vision", map[string]string{"/api/show": `{"capabilities": ["completion", "tools"]}`}, "qwen2.5-coder", "", false},
		{"openrouter modalities", map[string]string{"/v1/models": `{"data": [{"id": "x/y", "architecture": {"input_modalities": ["text", "image"]}}]}`}, "x/y", "", true},
		{"nothing said: the name", nil, "openai/gpt-4o-mini", "", true},
		{"nothing said, unknown name", nil, "qwen2.5-coder", "", false},
		{"setting on wins", map[string]string{"/props": `{"modalities": {"vision": false}}`}, "local", ImagesOn, true},
		{"setting off wins", map[string]string{"/props": `{"modalities": {"vision": true}}`}, "local", ImagesOff, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body, ok := c.routes[r.URL.Path]; ok {
					_, _ = io.WriteString(w, body)
					return
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			a := &Agent{log: slog.New(slog.DiscardHandler)}
			a.mcfg = ModelConfig{BaseURL: srv.URL + "/v1", Name: c.model, Images: c.setting}
			got, why := a.takesImages(context.Background(), "")
			if got != c.want {
				t.Fatalf("takesImages = %v (%s), want %v", got, why, c.want)
			}
			if !got && why == "" {
				t.Fatal("a refusal says nothing")
			}
			// Asked once per model: the answer is kept.
			srv.Close()
			if again, _ := a.takesImages(context.Background(), ""); again != got {
				t.Fatal("the second answer differs")
			}
		})
	}
}

func TestVisionByName(t *testing.T) {
	for name, want := range map[string]bool{"gpt-4o": true, "gpt-4o-mini": true, "openai/gpt-4.1": true, "claude-3-5-sonnet": true,
		"qwen2.5-vl-7b": true, "llava:13b": true, "llama3.2-vision": true, "qwen2.5-coder": false, "deepseek-coder": false,
		"gpt-3.5-turbo": false, "o3-mini": false, "o4-mini": true, "o1": true, "mistral-large": false} {
		if got := visionByName(name); got != want {
			t.Errorf("visionByName(%q) = %v, want %v", name, got, want)
		}
	}
}
