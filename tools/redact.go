package tools

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// RedactMark replaces a secret in text the model, the editor or the log
// sees.
const RedactMark = "********"

const (
	minSecretLen  = 3 // shorter values are too common to hide
	minEncodedLen = 6 // an encoded form shorter than this would hit noise
)

// Redactor hides secrets the user gave the run in command output: the value
// verbatim, reversed (rev), in hex (xxd -p, od with no spaces), base64 at
// any alignment (so `echo "x$S" | base64` is caught too) and URL-encoded.
// It runs on whole texts (before anything is persisted) and, through
// [Redactor.Stream], on a live stream, where a secret split across two
// writes is still caught. Safe for concurrent use.
//
// It cannot catch a value the command transforms otherwise (split in
// halves, spaced hex dumps, other encodings): that is why a command that
// uses a secret is never auto-allowed.
type Redactor struct {
	mu     sync.Mutex
	forms  []string          // every form of every secret, longest first
	marks  map[string]string // form → what replaces it, when not RedactMark
	maxLen int
	notify func(name, secret string)
}

// Notify has f told of every secret added from now on (a value typed at a
// password prompt among them), so that the agent can hide it from later
// runs too.
func (r *Redactor) Notify(f func(name, secret string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notify = f
}

// NewRedactor hides secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		r.Add(s)
	}
	return r
}

// Add hides one more secret from now on.
func (r *Redactor) Add(secret string) { r.AddNamed("", secret) }

// AddNamed hides a secret the user gave under a name: its every form is
// replaced by "[secret $NAME]", so the model knows what was there without
// seeing it. An empty name uses RedactMark.
func (r *Redactor) AddNamed(name, secret string) {
	if len(secret) < minSecretLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.notify != nil {
		r.notify(name, secret)
	}
	for _, f := range secretForms(secret) {
		if !slices.Contains(r.forms, f) {
			r.forms = append(r.forms, f)
			r.maxLen = max(r.maxLen, len(f))
		}
		if name != "" {
			if r.marks == nil {
				r.marks = map[string]string{}
			}
			r.marks[f] = "[secret $" + name + "]"
		}
	}
	slices.SortStableFunc(r.forms, func(a, b string) int { return len(b) - len(a) })
}

// Redact returns s with every form of every secret replaced.
func (r *Redactor) Redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out, _ := r.redactUpTo(s, len(s))
	return out
}

// redactUpTo redacts s, emitting text up to limit (extended past it when a
// match starts before it), and returns the rest, unredacted.
func (r *Redactor) redactUpTo(s string, limit int) (string, string) {
	var b strings.Builder
	i := 0
	for i < limit {
		start, n := r.next(s, i)
		if start < 0 || start >= limit {
			break
		}
		b.WriteString(s[i:start])
		b.WriteString(r.mark(s[start : start+n]))
		i = start + n
	}
	if i < limit {
		b.WriteString(s[i:limit])
		i = limit
	}
	return b.String(), s[i:]
}

func (r *Redactor) mark(form string) string {
	if m, ok := r.marks[form]; ok {
		return m
	}
	return RedactMark
}

// next finds the leftmost match at or after from, the longest on a tie.
func (r *Redactor) next(s string, from int) (int, int) {
	best, n := -1, 0
	for _, f := range r.forms {
		j := strings.Index(s[from:], f)
		if j < 0 {
			continue
		}
		j += from
		if best < 0 || j < best || (j == best && len(f) > n) {
			best, n = j, len(f)
		}
	}
	return best, n
}

// secretForms lists the forms of s a command could print.
func secretForms(s string) []string {
	forms := []string{s, reverseRunes(s), reverseBytes(s), hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s)))}
	for _, q := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		forms = append(forms, q, lowerPercent(q))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			forms = append(forms, base64Core(enc, s, k))
		}
	}
	var out []string
	for i, f := range forms {
		if len(f) < minSecretLen || (i > 0 && len(f) < minEncodedLen) || slices.Contains(out, f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// base64Core is the part of the base64 encoding of s that depends on s
// alone when s starts k bytes into a 3-byte group of a longer text: the
// characters whose 6 bits all come from s.
func base64Core(enc *base64.Encoding, s string, k int) string {
	buf := make([]byte, k+len(s))
	copy(buf[k:], s)
	e := enc.EncodeToString(buf)
	first := (8*k + 5) / 6              // first character starting at or after bit 8k
	last := (8*(k+len(s)) - 6) / 6      // last character ending by bit 8(k+n)
	if first > last || last >= len(e) { // too short to have a stable core
		return ""
	}
	return e[first : last+1]
}

func reverseRunes(s string) string {
	rs := []rune(s)
	slices.Reverse(rs)
	return string(rs)
}

func reverseBytes(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// lowerPercent lower-cases the hex digits of %XX escapes.
func lowerPercent(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if c >= 'A' && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// RedactStream is a writer that redacts a live stream before passing it
// on. It holds back the last few bytes (shorter than the longest form) in
// case a secret continues in the next write; Flush passes them on.
type RedactStream struct {
	r       *Redactor
	out     func(string)
	mu      sync.Mutex // guards pending
	pending string
}

// Stream returns a RedactStream that hands redacted text to out.
func (r *Redactor) Stream(out func(string)) *RedactStream {
	return &RedactStream{r: r, out: out}
}

func (w *RedactStream) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending += string(p)
	w.r.mu.Lock()
	limit := len(w.pending) - max(w.r.maxLen-1, 0)
	for limit > 0 && limit < len(w.pending) && !utf8.RuneStart(w.pending[limit]) {
		limit-- // never cut a character in two
	}
	var emit string
	if limit > 0 {
		emit, w.pending = w.r.redactUpTo(w.pending, limit)
	}
	w.r.mu.Unlock()
	if emit != "" {
		w.out(emit)
	}
	return len(p), nil
}

// Flush passes on what was held back.
func (w *RedactStream) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == "" {
		return
	}
	s := w.r.Redact(w.pending)
	w.pending = ""
	w.out(s)
}
