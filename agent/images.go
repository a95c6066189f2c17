package agent

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/images"
)

// Images the user gives a prompt, and the ones a tool hands the model, are
// stored once in the state directory under the hash of their bytes
// (images/<id>), and messages name them. A request reads the same bytes
// every time, so the data URL it sends never changes within a session, and
// the journal stays small.

// ImageInput is an image the editor attaches to a prompt: its bytes
// (base64 in Data, with MimeType) or a workspace file (Path).
type ImageInput struct {
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	Path     string `json:"path,omitempty"`
	// Name says where data came from ("screenshot.png"), for the history.
	Name string `json:"name,omitempty"`
}

// ImageRef names a stored image; what the editors show of it.
type ImageRef struct {
	// ID is the hash of the image's bytes; agent/image returns them.
	ID       string `json:"id"`
	MimeType string `json:"mimeType"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	Bytes    int    `json:"bytes"`
	// Name is where it came from: the file's workspace path, or "pasted".
	Name string `json:"name,omitempty"`
	// Scaled says agentd scaled it down to the model's limit.
	Scaled bool `json:"scaled,omitempty"`

	data []byte // filled for a request (hydrateImages), never persisted
}

// ImageParams asks for a stored image (agent/image).
type ImageParams struct {
	ID string `json:"id"`
}

// String says what the image is: "PNG, 800×600, 45 KB, scaled down from
// 4000×3000" (the original size is not kept: "scaled down").
func (r ImageRef) String() string {
	s := images.Summary(r.MimeType, r.Width, r.Height, r.Bytes)
	if r.Scaled {
		s += ", scaled down"
	}
	return s
}

// ImageData is a stored image's bytes.
type ImageData struct {
	MimeType string `json:"mimeType"`
	// Data is base64.
	Data   string `json:"data"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// imageOnlyPrompt stands for the text of a prompt that is only images.
const imageOnlyPrompt = "(see the image)"

// maxImageInput bounds an image before it is decoded: larger ones are
// refused, not scaled.
const maxImageInput = 32 << 20

// maxPromptImages bounds the images of one prompt.
const maxPromptImages = 20

// imageStore keeps images by hash on disk, and the most recently used in
// memory (every request of a session sends the same ones again).
type imageStore struct {
	dir string

	mu    sync.Mutex // guards cache, order, size
	cache map[string][]byte
	order []string
	size  int
}

// imageCacheBytes bounds the images kept in memory.
const imageCacheBytes = 64 << 20

func newImageStore(stateDir string) *imageStore {
	return &imageStore{dir: filepath.Join(stateDir, "images"), cache: map[string][]byte{}}
}

// put stores img (once per content) and returns its reference.
func (s *imageStore) put(img images.Image, name string) (ImageRef, error) {
	sum := sha256.Sum256(img.Data)
	ref := ImageRef{ID: hex.EncodeToString(sum[:]), MimeType: img.MimeType, Width: img.Width, Height: img.Height,
		Bytes: len(img.Data), Name: name, Scaled: img.Scaled}
	path := filepath.Join(s.dir, ref.ID)
	if _, err := os.Stat(path); err == nil {
		s.remember(ref.ID, img.Data)
		return ref, nil
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return ImageRef{}, fmt.Errorf("%w: storing an image: %v", ErrNotSaved, err)
	}
	if err := tools.WriteAtomic(path, img.Data, 0o600); err != nil {
		return ImageRef{}, fmt.Errorf("%w: storing an image: %v", ErrNotSaved, err)
	}
	s.remember(ref.ID, img.Data)
	return ref, nil
}

// get returns an image's bytes.
func (s *imageStore) get(id string) ([]byte, error) {
	if !validImageID(id) {
		return nil, fmt.Errorf("%w: no image %q", ErrInvalid, id)
	}
	s.mu.Lock()
	data, ok := s.cache[id]
	s.mu.Unlock()
	if ok {
		return data, nil
	}
	data, err := os.ReadFile(filepath.Join(s.dir, id))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: no image %s", ErrInvalid, id)
		}
		return nil, err
	}
	s.remember(id, data)
	return data, nil
}

func (s *imageStore) remember(id string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cache[id]; ok || len(data) > imageCacheBytes/4 {
		return
	}
	s.cache[id], s.order, s.size = data, append(s.order, id), s.size+len(data)
	for s.size > imageCacheBytes && len(s.order) > 0 {
		old := s.order[0]
		s.order = s.order[1:]
		s.size -= len(s.cache[old])
		delete(s.cache, old)
	}
}

func validImageID(id string) bool {
	if len(id) != 64 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}

// imageLimits are the configured bounds of an image sent to the model.
func (a *Agent) imageLimits() images.Limits {
	lim := images.DefaultLimits
	if n := a.ModelConfig().ImageMaxSide; n > 0 {
		lim.MaxSide = n
	}
	return lim
}

// promptImages checks, scales and stores a prompt's images. Nothing is
// kept of a prompt that has a bad one: the error names it.
func (a *Agent) promptImages(ctx context.Context, model string, in []ImageInput) ([]ImageRef, error) {
	if len(in) > maxPromptImages {
		return nil, fmt.Errorf("%w: %d images; at most %d a prompt", ErrInvalid, len(in), maxPromptImages)
	}
	if len(in) > 0 && a.imagesRefused(ctx, model) {
		return nil, fmt.Errorf("%w: the model %s does not take images (setting model.images)", ErrInvalid, a.ModelConfig().Name)
	}
	refs := make([]ImageRef, 0, len(in))
	for i, im := range in {
		data, name, err := a.imageBytes(im)
		if err != nil {
			return nil, fmt.Errorf("%w: image %d: %v", ErrInvalid, i+1, err)
		}
		img, err := images.Prepare(data, a.imageLimits())
		if err != nil {
			return nil, fmt.Errorf("%w: image %d (%s): %v", ErrInvalid, i+1, name, err)
		}
		if im.MimeType != "" && im.Path == "" && !sameImageType(im.MimeType, data) {
			return nil, fmt.Errorf("%w: image %d says %s but is %s", ErrInvalid, i+1, im.MimeType, images.Sniff(data))
		}
		ref, err := a.images.put(img, name)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func sameImageType(declared string, data []byte) bool {
	d := strings.ToLower(strings.TrimSpace(declared))
	return d == images.Sniff(data) || d == "image/jpg" && images.Sniff(data) == "image/jpeg"
}

// imageBytes reads one input: inline base64, or a workspace file read
// under the same rules as read_file's.
func (a *Agent) imageBytes(im ImageInput) ([]byte, string, error) {
	switch {
	case im.Path != "" && im.Data != "":
		return nil, "", errors.New("give either data or path, not both")
	case im.Path != "":
		_, rel, err := tools.ResolvePath(a.cfg.Root, im.Path)
		if err != nil {
			return nil, "", err
		}
		data, fi, err := tools.ReadWorkspaceFile(a.cfg.Root, rel, maxImageInput)
		switch {
		case err != nil:
			return nil, rel, err
		case fi.IsDir():
			return nil, rel, fmt.Errorf("%s is a directory", rel)
		case data == nil:
			return nil, rel, fmt.Errorf("%s is %d bytes; at most %d MiB", rel, fi.Size(), maxImageInput>>20)
		}
		return data, rel, nil
	case im.Data != "":
		if base64.StdEncoding.DecodedLen(len(im.Data)) > maxImageInput {
			return nil, "", fmt.Errorf("more than %d MiB", maxImageInput>>20)
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(im.Data))
		if err != nil {
			return nil, "", fmt.Errorf("data is not base64: %v", err)
		}
		name := filepath.Base(strings.TrimSpace(im.Name))
		if name == "." || name == "/" || name == "" {
			name = "pasted"
		}
		return data, name, nil
	}
	return nil, "", errors.New("neither data nor path")
}

// Image returns a stored image, for an editor showing a conversation.
func (a *Agent) Image(_ context.Context, id string) (ImageData, error) {
	data, err := a.images.get(id)
	if err != nil {
		return ImageData{}, err
	}
	img, err := images.Prepare(data, images.Limits{MaxSide: 1 << 30, MaxBytes: 1 << 30})
	if err != nil {
		return ImageData{}, fmt.Errorf("image %s: %v", id, err)
	}
	return ImageData{MimeType: img.MimeType, Data: base64.StdEncoding.EncodeToString(data), Width: img.Width, Height: img.Height}, nil
}

// hydrateImages gives each image of msgs its bytes for a request. An image
// that can no longer be read (its file removed) becomes a line of text.
func (a *Agent) hydrateImages(msgs []Message) []Message {
	for i, m := range msgs {
		if len(m.Images) == 0 {
			continue
		}
		m.Images = append([]ImageRef(nil), m.Images...)
		kept := m.Images[:0]
		for _, ref := range m.Images {
			data, err := a.images.get(ref.ID)
			if err != nil {
				m.Content += fmt.Sprintf("\n[agentd: an image (%s) is no longer available]", ref.Name)
				continue
			}
			ref.data = data
			kept = append(kept, ref)
		}
		m.Images = kept
		msgs[i] = m
	}
	return msgs
}

// dataURL is how a request carries an image.
func (ref ImageRef) dataURL() string {
	return "data:" + ref.MimeType + ";base64," + base64.StdEncoding.EncodeToString(ref.data)
}

// imageTokens estimates what an image costs in the context window: about
// a token per 750 pixels (Anthropic's rule; OpenAI's tiles come close),
// at most what a 2048-px picture costs.
func imageTokens(ref ImageRef) int {
	return min(ref.Width*ref.Height/750, 1600) + 85
}

// attachImage stores the picture a tool handed the model and keeps its
// reference with the call's result. A picture that cannot be stored is
// said in the result instead: the run goes on.
func (r *run) attachImage(res *callResult, out tools.Result, title string) {
	ref, err := r.a.images.put(*out.Image, title)
	if err != nil {
		r.logger().Error("storing a tool's image", "err", err)
		res.Content += "\n[agentd: the image could not be kept, so it is not shown: " + err.Error() + "]"
		return
	}
	res.Image = &ref
}

// pictureMessage is the user message that shows the model a tool's picture.
func pictureMessage(ref ImageRef) Message {
	return Message{Role: RoleUser, Content: fmt.Sprintf("[agentd: the image from %s]", ref.Name), Images: []ImageRef{ref}}
}

// modelEyes is what the tools know of the run's model's images
// (tools.ImageReader).
type modelEyes struct{ r *run }

func (e modelEyes) ImageLimits() images.Limits { return e.r.a.imageLimits() }

func (e modelEyes) TakesImages(ctx context.Context) (bool, string) {
	return e.r.a.takesImages(ctx, e.r.runSettings().Model)
}
