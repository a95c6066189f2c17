package rag

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// openAIBatch is the number of inputs per request: one request per chunk, as
// chromem-go's built-in functions do, would make indexing latency-bound.
const openAIBatch = 64

type openAIEmbedder struct {
	url, apiKey, model string
	client             *http.Client
}

// NewOpenAIEmbedder returns an Embedder for an OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, LM Studio, vLLM...). baseURL may
// name the API root ("http://localhost:11434/v1") or the server
// ("http://localhost:11434"); apiKey may be empty for local servers.
func NewOpenAIEmbedder(baseURL, apiKey, model string) Embedder {
	u := strings.TrimRight(baseURL, "/")
	switch {
	case strings.HasSuffix(u, "/embeddings"):
	case strings.HasSuffix(u, "/v1"):
		u += "/embeddings"
	default:
		u += "/v1/embeddings"
	}
	return &openAIEmbedder{url: u, apiKey: apiKey, model: model, client: &http.Client{Timeout: 2 * time.Minute}}
}

func (e *openAIEmbedder) Name() string { return "openai:" + e.model }

func (e *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += openAIBatch {
		vecs, err := e.embedBatch(ctx, texts[start:min(start+openAIBatch, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (e *openAIEmbedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": e.model, "input": texts})
	if err != nil {
		return nil, fmt.Errorf("encode embeddings request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings request: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("embeddings request: %s: %s", resp.Status, bytes.TrimSpace(msg))
	}
	var res struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		return nil, fmt.Errorf("decode embeddings response: %w", err)
	}
	vecs := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= len(vecs) {
			return nil, fmt.Errorf("embeddings response: index %d out of range", d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, fmt.Errorf("embeddings response: no vector for input %d", i)
		}
	}
	return vecs, nil
}
