package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ModelInfo is one model an endpoint lists.
type ModelInfo struct {
	ID      string
	OwnedBy string
	// ContextWindow is the window the listing states (vLLM's max_model_len,
	// OpenRouter's context_length), 0 when it states none.
	ContextWindow int
}

// ContextWindowInfo is what an endpoint says of a model's context window.
type ContextWindowInfo struct {
	// Tokens is the window requests run with; 0 when the endpoint does not
	// say (then Max, if known, is only the model's limit).
	Tokens int
	// Max is the most the model supports, when known.
	Max int
	// Source names the answer used, e.g. "llama.cpp /props".
	Source string
}

// probeTimeout bounds all the questions a probe asks an endpoint.
const probeTimeout = 5 * time.Second

// maxListBytes bounds a model list (OpenRouter's runs to a few hundred KB).
const maxListBytes = 8 << 20

// ListModels asks the endpoint for its models (GET /models).
func ListModels(ctx context.Context, cfg ModelConfig) ([]ModelInfo, error) {
	return newOpenAIModel(cfg).listModels(ctx)
}

func (m *openaiModel) listModels(ctx context.Context) ([]ModelInfo, error) {
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			OwnedBy       string `json:"owned_by"`
			MaxModelLen   int    `json:"max_model_len"`
			ContextLength int    `json:"context_length"`
			ContextWindow int    `json:"context_window"`
		} `json:"data"`
	}
	if err := m.getJSON(ctx, http.MethodGet, m.base+"/models", nil, &list); err != nil {
		return nil, err
	}
	out := make([]ModelInfo, 0, len(list.Data))
	for _, d := range list.Data {
		out = append(out, ModelInfo{ID: d.ID, OwnedBy: d.OwnedBy, ContextWindow: firstPositive(d.MaxModelLen, d.ContextLength, d.ContextWindow)})
	}
	return out, nil
}

// ProbeContextWindow asks the endpoint the model's context window, trying
// in turn the model list, llama.cpp's /props, and Ollama's /api/ps (a
// loaded model's window) and /api/show (num_ctx and the model's limit). An
// endpoint that answers none of them gives a zero info and the last error.
func ProbeContextWindow(ctx context.Context, cfg ModelConfig) (ContextWindowInfo, error) {
	return newOpenAIModel(cfg).probeWindow(ctx)
}

func (m *openaiModel) probeWindow(ctx context.Context) (ContextWindowInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var errs []error
	for _, probe := range []func(context.Context) (ContextWindowInfo, error){m.windowFromList, m.windowFromProps, m.windowFromOllamaPS, m.windowFromOllamaShow} {
		info, err := probe(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if info.Tokens > 0 || info.Max > 0 {
			return info, nil
		}
	}
	return ContextWindowInfo{}, errors.Join(errs...)
}

func (m *openaiModel) windowFromList(ctx context.Context) (ContextWindowInfo, error) {
	models, err := m.listModels(ctx)
	if err != nil {
		return ContextWindowInfo{}, err
	}
	for _, mi := range models {
		if mi.ID == m.cfg.Name && mi.ContextWindow > 0 {
			return ContextWindowInfo{Tokens: mi.ContextWindow, Max: mi.ContextWindow, Source: "GET /models"}, nil
		}
	}
	return ContextWindowInfo{}, nil
}

// windowFromProps reads llama.cpp's server properties: n_ctx is the window
// the server was started with.
func (m *openaiModel) windowFromProps(ctx context.Context) (ContextWindowInfo, error) {
	var props struct {
		NCtx     int `json:"n_ctx"`
		Defaults struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if err := m.getJSON(ctx, http.MethodGet, m.root()+"/props", nil, &props); err != nil {
		return ContextWindowInfo{}, err
	}
	n := firstPositive(props.Defaults.NCtx, props.NCtx)
	return ContextWindowInfo{Tokens: n, Source: "llama.cpp /props"}, nil
}

// windowFromOllamaPS reads the window of the model as Ollama loaded it.
func (m *openaiModel) windowFromOllamaPS(ctx context.Context) (ContextWindowInfo, error) {
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := m.getJSON(ctx, http.MethodGet, m.root()+"/api/ps", nil, &ps); err != nil {
		return ContextWindowInfo{}, err
	}
	for _, p := range ps.Models {
		if sameOllamaModel(p.Name, m.cfg.Name) || sameOllamaModel(p.Model, m.cfg.Name) {
			return ContextWindowInfo{Tokens: p.ContextLength, Source: "ollama /api/ps"}, nil
		}
	}
	return ContextWindowInfo{}, nil
}

// windowFromOllamaShow reads a model's num_ctx parameter (its Modelfile's)
// and the limit in its model_info ("<arch>.context_length"). Without
// num_ctx Ollama runs the model with its server default, which may be as
// small as 4096 tokens: Tokens stays 0 and Max says what the model could do.
func (m *openaiModel) windowFromOllamaShow(ctx context.Context) (ContextWindowInfo, error) {
	var show struct {
		Parameters string                     `json:"parameters"`
		ModelInfo  map[string]json.RawMessage `json:"model_info"`
	}
	body, _ := json.Marshal(map[string]string{"model": m.cfg.Name})
	if err := m.getJSON(ctx, http.MethodPost, m.root()+"/api/show", body, &show); err != nil {
		return ContextWindowInfo{}, err
	}
	info := ContextWindowInfo{Source: "ollama /api/show"}
	sc := bufio.NewScanner(strings.NewReader(show.Parameters))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "num_ctx" {
			info.Tokens, _ = strconv.Atoi(f[1])
		}
	}
	for k, v := range show.ModelInfo {
		if strings.HasSuffix(k, ".context_length") {
			info.Max, _ = strconv.Atoi(string(v))
		}
	}
	return info, nil
}

func sameOllamaModel(a, b string) bool {
	return a == b || strings.TrimSuffix(a, ":latest") == strings.TrimSuffix(b, ":latest")
}

// root is the server's address without the OpenAI path (/v1), where
// llama.cpp and Ollama serve their own endpoints.
func (m *openaiModel) root() string {
	return strings.TrimSuffix(m.base, "/v1")
}

func (m *openaiModel) getJSON(ctx context.Context, method, url string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if m.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	if len(data) > maxListBytes {
		return fmt.Errorf("%s %s: answer larger than %d MiB", method, url, maxListBytes>>20)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	return nil
}

func firstPositive(v ...int) int {
	for _, n := range v {
		if n > 0 {
			return n
		}
	}
	return 0
}

// smallWindow is a context window agentd's prompt barely fits in: the
// system prompt and tool schemas alone take several thousand tokens.
const smallWindow = 16_000

// windowProbe is a model's context window, asked of its endpoint once.
type windowProbe struct {
	mu     sync.Mutex // held while probing, so concurrent runs wait for one probe
	done   bool
	tokens atomic.Int64 // read without waiting
}

// windowProber is a Model whose endpoint may say its context window.
type windowProber interface {
	// probeOnce asks the endpoint, the first time only.
	probeOnce(ctx context.Context, report func(ContextWindowInfo, error))
	// knownWindow is the answer so far, 0 if none.
	knownWindow() int
}

func (m *openaiModel) probeOnce(ctx context.Context, report func(ContextWindowInfo, error)) {
	m.window.mu.Lock()
	defer m.window.mu.Unlock()
	if m.window.done || ctx.Err() != nil {
		return
	}
	m.window.done = true
	info, err := m.probeWindow(ctx)
	m.window.tokens.Store(int64(info.Tokens))
	report(info, err)
}

func (m *openaiModel) knownWindow() int { return int(m.window.tokens.Load()) }

// reportWindow logs what the probe found, warning when the window is
// unknown on a local server or too small for agentd's prompt.
func (a *Agent) reportWindow(cfg ModelConfig, info ContextWindowInfo, err error) {
	a.pfx.noteProbe(info)
	switch {
	case info.Tokens > 0 && info.Tokens < smallWindow:
		a.log.Warn("the model's context window is small for agentd's prompt; raise it on the server", "model", cfg.Name, "tokens", info.Tokens, "source", info.Source)
	case info.Tokens > 0:
		a.log.Info("model context window", "model", cfg.Name, "tokens", info.Tokens, "source", info.Source)
	case info.Max > 0:
		a.log.Warn("the model's context window is unknown: Ollama runs it with its default, which may be 4096 tokens; set OLLAMA_CONTEXT_LENGTH or agentd's contextWindow",
			"model", cfg.Name, "model_limit", info.Max)
	default:
		a.log.Debug("the endpoint does not say the model's context window", "model", cfg.Name, "err", err)
	}
}

// probeWindow asks the endpoint for the model's context window once per
// model, unless the configuration sets it. Runs wait for the first probe.
func (a *Agent) probeWindow(ctx context.Context) {
	if a.ModelConfig().ContextWindow > 0 {
		return
	}
	if p, ok := a.model().(windowProber); ok {
		cfg := a.ModelConfig()
		p.probeOnce(ctx, func(info ContextWindowInfo, err error) { a.reportWindow(cfg, info, err) })
	}
}

// ContextWindow is the model's context window in tokens, as compaction
// budgets for it: the configured one, else what the endpoint said (asked at
// a run's first step), else 0, which means the 128k default.
func (a *Agent) ContextWindow() int {
	if w := a.ModelConfig().ContextWindow; w > 0 {
		return w
	}
	if p, ok := a.model().(windowProber); ok {
		return p.knownWindow()
	}
	return 0
}

// Models lists the models of the configured endpoint.
func (a *Agent) Models(ctx context.Context) ([]ModelInfo, error) {
	cfg := a.ModelConfig()
	if !cfg.Configured() {
		return nil, ErrNoModel
	}
	return ListModels(ctx, cfg)
}
