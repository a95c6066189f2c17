package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Whether a model reads images: the setting model.images says so ("on",
// "off"), or, left at "auto", the endpoint does (llama.cpp's /props
// modalities, Ollama's capabilities, a model list's input modalities as
// OpenRouter gives them), or the model's name does for the well-known
// families that read images. Asked of the endpoint once per model, and only
// when an image comes up: a run without pictures asks nothing.

// Values of model.images.
const (
	ImagesAuto = "auto"
	ImagesOn   = "on"
	ImagesOff  = "off"
)

// vision is what is known of one model: +1 reads images, -1 does not, 0
// unknown; source says who said so.
type vision struct {
	reads  int
	source string
}

// visionProbe caches the answer per model name.
type visionProbe struct {
	mu     sync.Mutex // held while probing: concurrent runs wait for one probe
	byName map[string]vision
}

// takesImages says whether the model reads images, and if not, why, in
// words the model or the user reads.
func (a *Agent) takesImages(ctx context.Context, name string) (bool, string) {
	cfg := a.ModelConfig()
	if name == "" {
		name = cfg.Name
	}
	switch cfg.Images {
	case ImagesOn:
		return true, ""
	case ImagesOff:
		return false, "the model does not take images (setting model.images is off)"
	}
	v := a.visionOf(ctx, name)
	switch {
	case v.reads > 0:
		return true, ""
	case v.reads < 0:
		return false, fmt.Sprintf("the model %s does not take images (%s says so; the setting model.images can say otherwise)", name, v.source)
	}
	return false, fmt.Sprintf("it is not known that the model %s takes images (its endpoint does not say); the user can set model.images to on", name)
}

// imagesRefused says a prompt's images cannot be sent: the setting is off,
// or the endpoint says the model reads none. Unknown is not a refusal: the
// user chose to send the picture.
func (a *Agent) imagesRefused(ctx context.Context, name string) bool {
	cfg := a.ModelConfig()
	if name == "" {
		name = cfg.Name
	}
	switch cfg.Images {
	case ImagesOn:
		return false
	case ImagesOff:
		return true
	}
	return a.visionOf(ctx, name).reads < 0
}

func (a *Agent) visionOf(ctx context.Context, name string) vision {
	a.vision.mu.Lock()
	defer a.vision.mu.Unlock()
	if v, ok := a.vision.byName[name]; ok {
		return v
	}
	cfg := a.ModelConfig()
	cfg.Name = name
	v := vision{}
	if cfg.Configured() {
		v = newOpenAIModel(cfg).probeVision(ctx)
	}
	if v.reads == 0 && visionByName(name) {
		v = vision{reads: 1, source: "the model's name"}
	}
	if ctx.Err() == nil {
		if a.vision.byName == nil {
			a.vision.byName = map[string]vision{}
		}
		a.vision.byName[name] = v
	}
	a.log.Debug("model images", "model", name, "reads", v.reads, "source", v.source)
	return v
}

// probeVision asks the endpoint, in turn: llama.cpp's /props, Ollama's
// /api/show, the model list. The first that says yes or no answers.
func (m *openaiModel) probeVision(ctx context.Context) vision {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for _, probe := range []func(context.Context) vision{m.visionFromProps, m.visionFromOllama, m.visionFromList} {
		if v := probe(ctx); v.reads != 0 {
			return v
		}
	}
	return vision{}
}

func (m *openaiModel) visionFromProps(ctx context.Context) vision {
	var props struct {
		Modalities *struct {
			Vision bool `json:"vision"`
		} `json:"modalities"`
	}
	if m.getJSON(ctx, http.MethodGet, m.root()+"/props", nil, &props) != nil || props.Modalities == nil {
		return vision{}
	}
	return yesNo(props.Modalities.Vision, "llama.cpp /props")
}

func (m *openaiModel) visionFromOllama(ctx context.Context) vision {
	var show struct {
		Capabilities []string `json:"capabilities"`
	}
	body, _ := json.Marshal(map[string]string{"model": m.cfg.Name})
	if m.getJSON(ctx, http.MethodPost, m.root()+"/api/show", body, &show) != nil || len(show.Capabilities) == 0 {
		return vision{}
	}
	return yesNo(slices.Contains(show.Capabilities, "vision"), "ollama /api/show")
}

func (m *openaiModel) visionFromList(ctx context.Context) vision {
	var list struct {
		Data []struct {
			ID           string `json:"id"`
			Architecture *struct {
				InputModalities []string `json:"input_modalities"`
			} `json:"architecture"`
		} `json:"data"`
	}
	if m.getJSON(ctx, http.MethodGet, m.base+"/models", nil, &list) != nil {
		return vision{}
	}
	for _, d := range list.Data {
		if d.ID == m.cfg.Name && d.Architecture != nil && len(d.Architecture.InputModalities) > 0 {
			return yesNo(slices.Contains(d.Architecture.InputModalities, "image"), "GET /models")
		}
	}
	return vision{}
}

func yesNo(yes bool, source string) vision {
	if yes {
		return vision{reads: 1, source: source}
	}
	return vision{reads: -1, source: source}
}

// visionFamilies are parts of the names of models known to read images,
// for endpoints that do not say (OpenAI's own model list does not).
var visionFamilies = []string{"gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "claude-3", "claude-sonnet-4",
	"claude-opus-4", "claude-haiku-4", "gemini", "gemma3", "gemma-3", "llava", "bakllava", "pixtral", "-vl", "vision",
	"minicpm-v", "moondream", "qwen2.5vl", "qwen3-vl", "llama4", "mistral-small3.1", "mistral-medium"}

// blindModels are names of those families that read no images.
var blindModels = []string{"o1-mini", "o1-preview", "o3-mini"}

func visionByName(name string) bool {
	n := strings.ToLower(name)
	if i := strings.LastIndex(n, "/"); i >= 0 {
		n = n[i+1:]
	}
	for _, b := range blindModels {
		if strings.HasPrefix(n, b) {
			return false
		}
	}
	for _, f := range visionFamilies {
		if strings.HasPrefix(n, f) || strings.Contains(f, "-") && strings.Contains(n, f) || f == "vision" && strings.Contains(n, f) {
			return true
		}
	}
	return false
}
