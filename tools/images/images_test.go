package images

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func pngOf(t *testing.T, w, h int, alpha bool) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if alpha && x == 0 && y == 0 {
				a = 0
			}
			n := uint32(x*73856093) ^ uint32(y*19349663) // noise: compresses badly
			img.SetNRGBA(x, y, color.NRGBA{uint8(n), uint8(n >> 8), uint8(n >> 16), a})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestPrepareKeepsWhatFits(t *testing.T) {
	data := pngOf(t, 40, 30, false)
	img, err := Prepare(data, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if img.Scaled || !bytes.Equal(img.Data, data) || img.MimeType != "image/png" || img.Width != 40 || img.Height != 30 {
		t.Fatalf("a picture that fits was changed: %+v", Describe(img))
	}
}

func TestPrepareScalesDown(t *testing.T) {
	data := pngOf(t, 400, 100, false)
	img, err := Prepare(data, Limits{MaxSide: 200, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !img.Scaled || img.Width != 200 || img.Height != 50 || img.MimeType != "image/jpeg" {
		t.Fatalf("got %s (%s)", Describe(img), img.MimeType)
	}
	if _, err := jpeg.Decode(bytes.NewReader(img.Data)); err != nil {
		t.Fatalf("the scaled picture does not decode: %v", err)
	}
	// The same input gives the same bytes: a session's requests stay stable.
	again, _ := Prepare(data, Limits{MaxSide: 200, MaxBytes: 1 << 20})
	if !bytes.Equal(again.Data, img.Data) {
		t.Fatal("preparing the same picture twice gave different bytes")
	}
}

func TestPrepareKeepsTransparencyAsPNG(t *testing.T) {
	img, err := Prepare(pngOf(t, 300, 300, true), Limits{MaxSide: 100, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if img.MimeType != "image/png" || img.Width != 100 {
		t.Fatalf("got %s", Describe(img))
	}
}

func TestPrepareShrinksToTheByteLimit(t *testing.T) {
	data := pngOf(t, 600, 600, false)
	if len(data) <= 60000 {
		t.Fatalf("the test picture is only %d bytes", len(data))
	}
	img, err := Prepare(data, Limits{MaxSide: 2000, MaxBytes: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if len(img.Data) > 60000 || !img.Scaled {
		t.Fatalf("%d bytes, %s", len(img.Data), Describe(img))
	}
}

func TestPrepareRefuses(t *testing.T) {
	if _, err := Prepare([]byte("plain text, not a picture"), DefaultLimits); err != ErrNotImage {
		t.Fatalf("text: %v", err)
	}
	// A header that claims a giant picture is refused before decoding.
	bomb := pngOf(t, 1, 1, false)
	bomb[16], bomb[17], bomb[18], bomb[19] = 0, 1, 0, 0 // width 65536
	bomb[20], bomb[21], bomb[22], bomb[23] = 0, 1, 0, 0 // height 65536
	if _, err := Prepare(bomb, DefaultLimits); err == nil {
		t.Fatal("a 65536×65536 header was accepted")
	}
}

func TestPrepareSendsAnAnimationAsItsFirstFrame(t *testing.T) {
	pal := color.Palette{color.Black, color.White}
	anim := &gif.GIF{}
	for i := range 3 {
		fr := image.NewPaletted(image.Rect(0, 0, 10, 10), pal)
		fr.SetColorIndex(i, i, 1)
		anim.Image = append(anim.Image, fr)
		anim.Delay = append(anim.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		t.Fatal(err)
	}
	img, err := Prepare(buf.Bytes(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if img.MimeType == "image/gif" || !img.Scaled {
		t.Fatalf("an animated GIF was sent as it is: %s", Describe(img))
	}
}

// bombPNG is a PNG of w×h pixels of one gray, bits deep, in color type
// ct with bpp bytes a pixel: a few hundred kilobytes of file however
// large the picture.
func bombPNG(w, h int, bits, ct byte, bpp int) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		_ = binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = bits, ct
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	row := bytes.Repeat([]byte{0x80}, 1+w*bpp)
	row[0] = 0 // filter: none
	for range h {
		_, _ = zw.Write(row)
	}
	_ = zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// A decompression bomb within the pixel bound (a 500 KB PNG of 8000×8000
// pixels at 16 bits a channel, 512 MB decoded) is refused before it is
// decoded: it took 23 s of CPU and 1 GB of heap to scale. A picture of the
// 2500×2000 picture at 8 bits in gray is scaled.
func TestPrepareRefusesWhatWouldTakeTooMuchMemory(t *testing.T) {
	bomb := gunzip(t, "../../testdata/redteam/bomb-8000x8000-16bit.png.gz")
	start := time.Now()
	_, err := Prepare(bomb, DefaultLimits)
	if err == nil || !strings.Contains(err.Error(), "take 488.3 MB of memory to decode") {
		t.Fatalf("a 16-bit 8000×8000 PNG: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing it took %s", d)
	}
	gray := bombPNG(2500, 2000, 8, 0, 1)
	img, err := Prepare(gray, DefaultLimits)
	if err != nil || !img.Scaled || max(img.Width, img.Height) != DefaultLimits.MaxSide {
		t.Fatalf("a gray 2500×2000 PNG: %v %+v", err, Describe(img))
	}
}

// gunzip reads a gzipped test file (the bomb: 500 KB, and 3 KB gzipped).
func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
