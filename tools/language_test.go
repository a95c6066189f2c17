package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestColumns(t *testing.T) {
	line := "\ts := \"héllo 😀\" + Total(x)"
	byteCol := strings.Index(line, "Total")
	u := UTF16Column(line, byteCol)
	assert.Equal(t, len([]rune(line[:byteCol]))+1, u, "é is one unit, 😀 two")
	assert.Equal(t, byteCol, ByteColumn(line, u))
	assert.Equal(t, len(line), ByteColumn(line, 999), "past the end: the end")
	assert.Equal(t, 0, ByteColumn(line, 0))
}

func TestWordIndex(t *testing.T) {
	assert.Equal(t, 14, wordIndex("x := subTotal(Total)", "Total"), "a whole word, not inside subTotal")
	assert.Equal(t, 0, wordIndex("Total()", "Total"))
	assert.Equal(t, -1, wordIndex("Totals", "Total"))
	assert.Equal(t, 2, wordIndex("a.$el", "$el"), "JavaScript names may hold $")
	assert.Equal(t, -1, wordIndex("a.$el", "el"))
}

func TestReadableOutside(t *testing.T) {
	assert.True(t, readableOutside("/usr/lib/go/src/fmt/print.go"))
	assert.False(t, readableOutside("/etc/shadow"))
	assert.False(t, readableOutside("/home/ada/.ssh/id_rsa"))
	assert.False(t, readableOutside("/usr/../home/ada/.ssh/id_rsa"), "cleaned first")
}

func TestDiagnosticsReportBounded(t *testing.T) {
	var after []Diagnostic
	for i := range 30 {
		d := Diagnostic{Severity: SeverityWarning, Message: fmt.Sprintf("old warning %d", i)}
		d.Range.Start.Line = i
		after = append(after, d)
	}
	before := map[string][]Diagnostic{"/w/a.go": after[:]}
	news := Diagnostic{Severity: SeverityError, Message: "undefined: x\nmore detail"}
	news.Range.Start.Line = 40
	long := Diagnostic{Severity: SeverityError, Message: strings.Repeat("é", 300)}
	rep := NewDiagnosticsReport("/w", []FileDiagnostics{{Path: "/w/a.go", Server: "gopls",
		Diagnostics: append(append([]Diagnostic{}, after...), news, long, Diagnostic{Severity: SeverityHint, Message: "h"})}}, before)
	assert.Equal(t, 2, rep.New)
	assert.Len(t, rep.Items, reportMaxItems)
	assert.Equal(t, 32-reportMaxItems, rep.Omitted)
	assert.Equal(t, 1, rep.Quiet)
	lines := strings.Split(rep.Text, "\n")
	assert.Equal(t, "Diagnostics after your edits (gopls): 32 problems in the files you changed, 2 of them new.", lines[0])
	assert.True(t, strings.HasSuffix(lines[1], "(new)") && strings.HasSuffix(lines[2], "(new)"), "new ones first: %q", lines[1:3])
	assert.Contains(t, rep.Text, "a.go:41:1: error: undefined: x … (new)")
	assert.Contains(t, rep.Text, "(12 more problems not shown; 1 info or hint not shown.)")
	for _, l := range lines {
		assert.LessOrEqual(t, len(l), reportMaxMessage+64, "each line bounded")
	}
}

func TestDiagnosticsReportClean(t *testing.T) {
	rep := NewDiagnosticsReport("/w", []FileDiagnostics{{Path: "/w/a.go", Server: "gopls"},
		{Path: "/w/b.rs", Err: errors.New("rust-analyzer crashed: exit status 101")}}, nil)
	assert.Equal(t, "Diagnostics after your edits (gopls): no errors or warnings in a.go.\n(no diagnostics for b.rs: rust-analyzer crashed: exit status 101.)", rep.Text)
}

// stubLanguage answers for the files it covers and declines the others.
type stubLanguage struct {
	name   string
	covers string // a suffix
	asked  []string
}

func (s *stubLanguage) Diagnostics(ctx context.Context, files []string, fresh bool) ([]FileDiagnostics, error) {
	var out []FileDiagnostics
	for _, f := range files {
		s.asked = append(s.asked, f)
		fd := FileDiagnostics{Path: f, Server: s.name}
		if !strings.HasSuffix(f, s.covers) {
			fd.Err = fmt.Errorf("%w: %s has none", ErrNoLanguageServer, s.name)
		}
		out = append(out, fd)
	}
	return out, nil
}

func (s *stubLanguage) Definition(ctx context.Context, at TextPosition) ([]TextLocation, error) {
	if !strings.HasSuffix(at.Path, s.covers) {
		return nil, ErrNoLanguageServer
	}
	return []TextLocation{{Path: s.name}}, nil
}
func (s *stubLanguage) References(ctx context.Context, at TextPosition, d bool) ([]TextLocation, error) {
	return s.Definition(ctx, at)
}
func (s *stubLanguage) Hover(ctx context.Context, at TextPosition) (string, error) {
	return s.name, nil
}
func (s *stubLanguage) DocumentSymbols(ctx context.Context, f string) ([]Symbol, error) {
	return nil, ErrNoLanguageServer
}
func (s *stubLanguage) WorkspaceSymbols(ctx context.Context, q string) ([]Symbol, error) {
	return []Symbol{{Name: s.name}}, nil
}
func (s *stubLanguage) Warm([]string)   {}
func (s *stubLanguage) Navigates() bool { return s.covers == ".go" }

func TestChainFallsBack(t *testing.T) {
	editor, own := &stubLanguage{name: "editor", covers: ".go"}, &stubLanguage{name: "gopls-or-tsserver", covers: ".ts"}
	l := Chain(editor, own)
	out, err := l.Diagnostics(context.Background(), []string{"/w/a.go", "/w/b.ts"}, true)
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, "editor", out[0].Server)
	assert.Equal(t, "gopls-or-tsserver", out[1].Server)
	assert.Equal(t, []string{"/w/b.ts"}, own.asked, "only what the editor has no server for")
	got, err := l.Definition(context.Background(), TextPosition{Path: "/w/b.ts"})
	require.NoError(t, err)
	assert.Equal(t, "gopls-or-tsserver", got[0].Path)
	_, err = l.Definition(context.Background(), TextPosition{Path: "/w/c.rs"})
	assert.ErrorIs(t, err, ErrNoLanguageServer)
	assert.True(t, l.Navigates())
	assert.Same(t, own, Chain(nil, own))
}

// A language server misled by the workspace (a symlink, a line directive,
// a source map) can answer with a location anywhere: the line shown with
// it is never read from agentd's own files (a workspace that is the home
// directory holds config.json, the model's key), named or through a link,
// nor through a link out of the directories shown outside the workspace.
func TestNavigationShowsNoPrivateLine(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf := filepath.Join(root, ".config", "agentd")
	require.NoError(t, os.MkdirAll(conf, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(conf, "config.json"), []byte(`{"apiKey": "sk-private-1"}`), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(conf, "config.json"), filepath.Join(root, "leak.go")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "cart.go"), []byte("package cart\n"), 0o644))
	secret := filepath.Join(t.TempDir(), "key.pem")
	require.NoError(t, os.WriteFile(secret, []byte("PRIVATE KEY sk-private-2"), 0o600))
	modcache := t.TempDir()
	t.Setenv("GOMODCACHE", modcache)
	require.NoError(t, os.Symlink(secret, filepath.Join(modcache, "key.go")))

	env := &Env{Root: root, Private: []string{conf}, Reads: NewReadTracker()}
	src := newSources(env)
	for _, p := range []string{filepath.Join(conf, "config.json"), filepath.Join(root, "leak.go"), filepath.Join(modcache, "key.go")} {
		line := src.locationLine(t.Context(), TextLocation{Path: p})
		assert.NotContains(t, line, "sk-private", p)
	}
	line, ok := src.line(t.Context(), filepath.Join(root, "cart.go"), 0)
	assert.True(t, ok)
	assert.Equal(t, "package cart", line, "the workspace's own files are shown")
}
