package images

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoders registered with image.Decode
	"image/jpeg"
	"image/png"
	"net/http"

	xdraw "golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// Limits bound what is sent to a model.
type Limits struct {
	// MaxSide is the longest side in pixels.
	MaxSide int
	// MaxBytes is the most bytes one image may take once encoded.
	MaxBytes int
}

// DefaultLimits fit the common providers: OpenAI scales anything past 2048
// px itself, Anthropic refuses more than 5 MB of base64 (3.75 MB of bytes)
// and recommends about 1568 px; local vision models take less still.
var DefaultLimits = Limits{MaxSide: 2000, MaxBytes: 3_750_000}

// maxPixels refuses decompression bombs before they are decoded: a small
// file can declare a picture of billions of pixels.
const maxPixels = 64 << 20

// Image is a picture ready for a model.
type Image struct {
	MimeType string
	Data     []byte
	Width    int
	Height   int
	// Scaled says the picture was scaled down or re-encoded to fit.
	Scaled bool
	// Original is the picture's size before that, when Scaled.
	OrigWidth, OrigHeight int
}

// ErrNotImage is returned for data that is no picture a model takes.
var ErrNotImage = errors.New("not a PNG, JPEG, GIF or WebP image")

// Sniff names the picture format of data ("image/png" …), or "" when it is
// none a model takes.
func Sniff(data []byte) string {
	switch mt := http.DetectContentType(data); mt {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return mt
	}
	return ""
}

// Prepare checks that data is a picture and returns it as a model takes
// it: as it is when it fits lim, else scaled down (keeping its proportions)
// and encoded again, PNG when it has transparency, else JPEG.
func Prepare(data []byte, lim Limits) (Image, error) {
	mt := Sniff(data)
	if mt == "" {
		return Image{}, ErrNotImage
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, fmt.Errorf("a %s that cannot be read: %w", mt, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return Image{}, fmt.Errorf("a %s of %d×%d pixels: too large to read", mt, cfg.Width, cfg.Height)
	}
	img := Image{MimeType: mt, Data: data, Width: cfg.Width, Height: cfg.Height}
	if fits(img, lim) && (mt != "image/gif" || !animated(data)) {
		return img, nil
	}
	if need := decodeBytes(mt, cfg, data); need > maxDecodeBytes {
		return Image{}, fmt.Errorf("a %s of %d×%d pixels that would take %s of memory to decode (at most %s): too large to read; crop or scale it first",
			mt, cfg.Width, cfg.Height, Size(int(need)), Size(maxDecodeBytes))
	}
	decodeSlot <- struct{}{}
	defer func() { <-decodeSlot }()
	return shrink(img, lim)
}

// A picture the daemon decodes to scale it takes memory by its pixels and
// their depth, not by its file: a 500 KB PNG of 8000×8000 pixels at 16
// bits a channel decodes into 512 MB, and took 23 s of CPU and 1 GB of
// heap to scale. So a decode may take at most maxDecodeBytes, and one runs
// at a time in the daemon (subagents, sessions and the editor's prompts
// bring pictures at the same time).
const maxDecodeBytes = 256 << 20

var decodeSlot = make(chan struct{}, 1)

// decodeBytes estimates the memory decoding data takes: its pixels at the
// depth of its color model, and for a progressive JPEG the coefficients the
// decoder keeps for every block of every component (4 bytes a pixel a
// component).
func decodeBytes(mt string, cfg image.Config, data []byte) int64 {
	px := int64(cfg.Width) * int64(cfg.Height)
	per := int64(4)
	switch cfg.ColorModel {
	case color.RGBA64Model, color.NRGBA64Model:
		per = 8
	case color.Gray16Model:
		per = 2
	case color.GrayModel, color.AlphaModel:
		per = 1
	}
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		per = 1
	}
	if mt == "image/jpeg" {
		per = 3
		if progressiveJPEG(data) {
			per += 12
		}
	}
	return px * per
}

// progressiveJPEG says data holds a progressive frame (SOF2): outside the
// markers, the entropy-coded data never holds 0xFF followed by a marker
// code, so the two bytes are the marker itself.
func progressiveJPEG(data []byte) bool {
	return bytes.Contains(data, []byte{0xFF, 0xC2})
}

func fits(img Image, lim Limits) bool {
	return max(img.Width, img.Height) <= lim.MaxSide && len(img.Data) <= lim.MaxBytes
}

// animated says a GIF has more than one frame: providers take only still
// pictures, so an animation is sent as its first frame.
func animated(data []byte) bool {
	// Frames of an animation each carry a graphic control extension
	// (0x21 0xF9 0x04). A still picture mistaken for an animation is only
	// re-encoded as its one frame, so a count of those is enough.
	return bytes.Count(data, []byte{0x21, 0xF9, 0x04}) > 1
}

// shrink decodes the picture, scales it to fit lim.MaxSide, and encodes it
// again, lowering JPEG's quality (then the size) until it fits lim.MaxBytes.
func shrink(img Image, lim Limits) (Image, error) {
	src, _, err := image.Decode(bytes.NewReader(img.Data))
	if err != nil {
		return Image{}, fmt.Errorf("a %s that cannot be decoded: %w", img.MimeType, err)
	}
	out := Image{Scaled: true, OrigWidth: img.Width, OrigHeight: img.Height}
	side := min(lim.MaxSide, max(img.Width, img.Height))
	src = prescale(src, side)
	for range 6 {
		w, h := scaled(img.Width, img.Height, side)
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		xdraw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
		data, mt, err := encode(dst)
		if err != nil {
			return Image{}, err
		}
		out.MimeType, out.Data, out.Width, out.Height = mt, data, w, h
		if len(data) <= lim.MaxBytes {
			return out, nil
		}
		side = side * 3 / 4
	}
	return Image{}, fmt.Errorf("a %s that stays over %d bytes even at %d×%d", img.MimeType, lim.MaxBytes, out.Width, out.Height)
}

// prescale brings a picture much larger than side down to twice side with
// a cheap filter first: Catmull-Rom over every pixel of a 64-megapixel
// picture takes the daemon seconds, and the second pass hides the cheap
// one's roughness.
func prescale(src image.Image, side int) image.Image {
	b := src.Bounds()
	if max(b.Dx(), b.Dy()) <= 4*side {
		return src
	}
	w, h := scaled(b.Dx(), b.Dy(), 2*side)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst
}

func scaled(w, h, side int) (int, int) {
	if w >= h {
		return side, max(1, h*side/w)
	}
	return max(1, w*side/h), side
}

// encode writes PNG when the picture has any transparency (a screenshot
// with a see-through corner, an icon), JPEG at quality 85 otherwise.
func encode(img *image.RGBA) ([]byte, string, error) {
	var buf bytes.Buffer
	if !img.Opaque() {
		if err := png.Encode(&buf, img); err != nil {
			return nil, "", err
		}
		return buf.Bytes(), "image/png", nil
	}
	if err := jpeg.Encode(&buf, opaque{img}, &jpeg.Options{Quality: 85}); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), "image/jpeg", nil
}

// opaque hides the alpha channel from the JPEG encoder.
type opaque struct{ *image.RGBA }

func (o opaque) ColorModel() color.Model { return color.RGBAModel }

// Describe says in a few words what a picture is, for the model and the
// user: "PNG, 800×600, 45 KB" (and "scaled from 4000×3000" when it was).
func Describe(img Image) string {
	s := Summary(img.MimeType, img.Width, img.Height, len(img.Data))
	if img.Scaled {
		s += fmt.Sprintf(", scaled down from %d×%d", img.OrigWidth, img.OrigHeight)
	}
	return s
}

// Summary says what a picture of that format, size and weight is: "PNG,
// 800×600, 45 KB".
func Summary(mimeType string, width, height, bytes int) string {
	return fmt.Sprintf("%s, %d×%d, %s", formatName(mimeType), width, height, Size(bytes))
}

func formatName(mt string) string {
	switch mt {
	case "image/png":
		return "PNG"
	case "image/jpeg":
		return "JPEG"
	case "image/gif":
		return "GIF"
	case "image/webp":
		return "WebP"
	}
	return mt
}

// Size says n bytes in a few characters: "45 KB".
func Size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
