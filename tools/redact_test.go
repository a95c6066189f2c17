package tools

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"
)

const testSecret = "sk-Proj_9f8e7d6c5b4a?&/é"

// Every form a command can print, produced by the real programs a model
// would reach for.
func TestRedactRealPrograms(t *testing.T) {
	r := NewRedactor(testSecret)
	for _, line := range []string{
		`printf %s "$S"`,
		`printf 'key=%s\n' "$S"`,
		`printf %s "$S" | rev`,
		`printf %s "$S" | base64`,
		`printf 'x%s' "$S" | base64 -w0`,
		`printf 'xy%s' "$S" | base64 -w0`,
		`printf 'prefix: %s :suffix' "$S" | base64 -w0`,
		`printf %s "$S" | base64 | tr '+/' '-_'`,
		`printf %s "$S" | xxd -p -c 256`,
		`printf %s "$S" | od -An -tx1 -v | tr -d ' \n'`,
		`printf %s "$S" | xxd -p -c 256 | tr a-f A-F`,
		`python3 -c 'import sys,urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$S"`,
		`python3 -c 'import sys,urllib.parse; print(urllib.parse.quote_plus(sys.argv[1]))' "$S"`,
	} {
		cmd := exec.Command("bash", "-c", line)
		cmd.Env = []string{"S=" + testSecret, "LANG=C.UTF-8", "PATH=/usr/bin:/bin:/usr/local/bin:" + pythonDir()}
		out, err := cmd.Output()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 127 {
			t.Logf("%s: a program is missing (skipped)", line)
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got := r.Redact(string(out))
		if !strings.Contains(got, RedactMark) {
			t.Errorf("%s: %q not redacted", line, out)
		}
		if strings.Contains(got, "9f8e7d") {
			t.Errorf("%s: a recognisable piece remains: %q", line, got)
		}
	}
}

func pythonDir() string {
	if p, err := exec.LookPath("python3"); err == nil {
		return p[:strings.LastIndexByte(p, '/')]
	}
	return ""
}

// Base64 of the secret inside any longer text, at every alignment.
func TestRedactBase64Alignments(t *testing.T) {
	r := NewRedactor(testSecret)
	for pre := range 7 {
		for post := range 4 {
			text := strings.Repeat("a", pre) + testSecret + strings.Repeat("z", post)
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding} {
				e := enc.EncodeToString([]byte(text))
				if got := r.Redact(e); !strings.Contains(got, RedactMark) {
					t.Errorf("pre=%d post=%d: %q not redacted", pre, post, e)
				}
			}
		}
	}
}

// A stream cut at every possible point, in two or in single bytes, never
// lets the secret (or a form of it) through, and loses nothing else.
func TestRedactStreamSplits(t *testing.T) {
	r := NewRedactor(testSecret, "other-secret-value")
	text := "start " + testSecret + " middle " + base64.StdEncoding.EncodeToString([]byte(testSecret)) +
		" and other-secret-value end ünïcödé"
	want := r.Redact(text)
	if strings.Contains(want, testSecret) || strings.Contains(want, "other-secret") {
		t.Fatalf("whole text not redacted: %q", want)
	}
	for cut := 0; cut <= len(text); cut++ {
		var b strings.Builder
		s := r.Stream(func(p string) { b.WriteString(p) })
		s.Write([]byte(text[:cut]))
		s.Write([]byte(text[cut:]))
		s.Flush()
		if b.String() != want {
			t.Fatalf("cut at %d: got %q, want %q", cut, b.String(), want)
		}
	}
	var b strings.Builder
	var chunks []string
	s := r.Stream(func(p string) { b.WriteString(p); chunks = append(chunks, p) })
	for i := range len(text) {
		s.Write([]byte{text[i]})
	}
	s.Flush()
	if b.String() != want {
		t.Fatalf("byte by byte: got %q, want %q", b.String(), want)
	}
	for _, c := range chunks {
		if strings.Contains(c, "\ufffd") {
			t.Fatalf("a chunk cut a character in two: %q", c)
		}
	}
}

// Short values are not hidden (they would redact half of any output), and
// text without secrets passes untouched.
func TestRedactLeavesTheRest(t *testing.T) {
	r := NewRedactor("ab", "")
	if got := r.Redact("abc ab"); got != "abc ab" {
		t.Errorf("short secret redacted: %q", got)
	}
	r.Add("hunter22")
	text := "no secret here, just hunter and 22"
	if got := r.Redact(text); got != text {
		t.Errorf("got %q", got)
	}
	if got := r.Redact("pw=hunter22!"); got != "pw="+RedactMark+"!" {
		t.Errorf("got %q", got)
	}
}
