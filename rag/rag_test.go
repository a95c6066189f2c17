package rag

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/await"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTree creates files under root; content "" makes a directory.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func openBuilt(t *testing.T, root, state string) *Index {
	t.Helper()
	ctx := context.Background()
	ix, err := Open(ctx, Options{Root: root, StateDir: state})
	require.NoError(t, err)
	require.NoError(t, ix.Build(ctx, nil))
	return ix
}

func indexedFiles(ix *Index) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []string
	for p := range ix.files {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

func TestIgnoreRules(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":                "*.gen.go\n/logs/\nsecret*\n",
		"main.go":                   "package main\n",
		"api.gen.go":                "package main\n",
		"logs/today.txt":            "log line\n",
		"pkg/logs/keep.txt":         "anchored /logs/ only applies at the root\n",
		"sub/.gitignore":            "!special.gen.go\n*.tmp\n",
		"sub/special.gen.go":        "package sub\n",
		"sub/other.gen.go":          "package sub\n",
		"sub/x.tmp":                 "tmp\n",
		"sub/deep/.gitignore":       "!y.tmp\n",
		"sub/deep/y.tmp":            "negated in a deeper directory\n",
		"secret.env":                "KEY=1\n",
		".agentdignore":             "docs/private/\n",
		"docs/private/notes.md":     "# private\n",
		"docs/public.md":            "# public\n",
		"node_modules/lib/index.js": "module.exports = 1\n",
		"vendor/dep/dep.go":         "package dep\n",
		"go/build/build.go":         "package build\n", // nested build/ is source
		"build/out.js":              "generated\n",
		"go.sum":                    "x v1 h1:abc\n",
		"yarn.lock":                 "lock\n",
		"logo.png":                  "\x89PNG",
		"blob.txt":                  "a\x00b",
		"latin1.txt":                "caf\xe9\n",
		"big.txt":                   strings.Repeat("x", maxFileSize+1),
		".git/config":               "[core]\n",
	})
	// A symlink loop and a link to a directory above must not hang the walk.
	require.NoError(t, os.Symlink("loop-b", filepath.Join(root, "loop-a")))
	require.NoError(t, os.Symlink("loop-a", filepath.Join(root, "loop-b")))
	require.NoError(t, os.Symlink("..", filepath.Join(root, "sub", "up")))
	require.NoError(t, os.Symlink("main.go", filepath.Join(root, "alias.go")))
	unreadable := filepath.Join(root, "unreadable.go")
	require.NoError(t, os.WriteFile(unreadable, []byte("package x\n"), 0o000))

	ix := openBuilt(t, root, t.TempDir())
	want := []string{".agentdignore", ".gitignore", "alias.go", "docs/public.md", "go/build/build.go", "main.go",
		"pkg/logs/keep.txt", "sub/.gitignore", "sub/deep/.gitignore", "sub/deep/y.tmp", "sub/special.gen.go"}
	if os.Geteuid() == 0 {
		want = append(want, "unreadable.go") // root reads anything
		slices.Sort(want)
	}
	assert.Equal(t, want, indexedFiles(ix))
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, p := range []string{"blob.txt", "latin1.txt", "big.txt", "loop-a", "loop-b"} {
		assert.Contains(t, ix.skipped, p, "skip note for %s", p)
	}
}

func TestChunkGo(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Package demo is a test.\npackage demo\n\nimport \"fmt\"\n\n")
	b.WriteString("// Answer is the answer.\nconst Answer = 42\n\nconst Other = 1\n\n")
	b.WriteString("// Server serves.\ntype Server struct{ n int }\n\n")
	b.WriteString("// Serve runs the loop.\n// It never returns.\nfunc (s *Server) Serve() {\n")
	for i := 0; i < 200; i++ {
		b.WriteString("\tfmt.Println(\"line of a very long function body\", s.n)\n")
		if i%20 == 19 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n\nfunc tail() {}\n")
	chunks := chunkFile("demo/demo.go", b.String())
	require.NotEmpty(t, chunks)
	first := chunks[0]
	assert.Equal(t, 1, first.Start)
	assert.Equal(t, "package demo, import, Answer, Other, Server", first.Symbol, "small declarations merge")
	assert.Contains(t, first.Text, "// Answer is the answer.", "doc comments stay with their declaration")
	var serve []chunk
	for _, c := range chunks {
		assert.Equal(t, "go", c.Lang)
		assert.LessOrEqual(t, len(c.Text), maxChunk)
		if strings.HasPrefix(c.Symbol, "Server.Serve") {
			serve = append(serve, c)
		}
	}
	require.Greater(t, len(serve), 2, "a large function is split")
	assert.True(t, strings.HasPrefix(serve[0].Text, "// Serve runs the loop."))
	for i := 1; i < len(serve); i++ {
		assert.Equal(t, serve[i-1].End+1, serve[i].Start, "pieces are contiguous")
	}
	last := chunks[len(chunks)-1]
	assert.Contains(t, last.Symbol, "tail")
	assert.Equal(t, strings.Count(b.String(), "\n"), last.End)
}

func TestChunkText(t *testing.T) {
	src := "# Title\n\nintro text\n\n## Usage\n\nrun it\n\n" + strings.Repeat("filler paragraph line\n", 120) + "\n"
	chunks := chunkFile("README.md", src)
	require.NotEmpty(t, chunks)
	assert.Equal(t, "markdown", chunks[0].Lang)
	assert.Equal(t, "Title, Usage", chunks[0].Symbol)
	for _, c := range chunks {
		assert.LessOrEqual(t, len(c.Text), maxChunk)
	}
	// Broken Go falls back to blocks instead of failing.
	bad := chunkFile("bad.go", "package x\n\nfunc broken( {\n\nfunc ok() {}\n")
	assert.NotEmpty(t, bad)
}

func TestTokenize(t *testing.T) {
	var tk tokenizer
	assert.Equal(t, []string{"httpserver", "http", "serv", "listen_and_serve", "listen", "serv", "config", "config"},
		tk.terms("HTTPServer listen_and_serve configuration cfg"))
	assert.Equal(t, []string{"pars", "pars", "pars", "pars"}, tk.terms("parse parsing parsed parses"))
}

// found reports whether any hit's text contains word.
func found(t *testing.T, ix *Index, q, word string) bool {
	t.Helper()
	hits, _, err := ix.Search(context.Background(), q, 10)
	require.NoError(t, err)
	for _, h := range hits {
		for _, c := range h.Chunks {
			if strings.Contains(strings.ToLower(c.Text), strings.ToLower(word)) {
				return true
			}
		}
	}
	return false
}

func search(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	hits, _, err := ix.Search(context.Background(), q, 5)
	require.NoError(t, err)
	var out []string
	for _, h := range hits {
		for _, c := range h.Chunks {
			out = append(out, h.Path+":"+c.Symbol)
		}
	}
	return out
}

func TestIncremental(t *testing.T) {
	ctx := context.Background()
	root, state := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{
		"a.go":     "package a\n\n// Frobnicate twists the widget.\nfunc Frobnicate() {}\n",
		"b.go":     "package a\n\n// Quux returns the quux.\nfunc Quux() int { return 1 }\n",
		"blob.txt": "binary\x00content", // read once, then remembered as unreadable
	})
	ix := openBuilt(t, root, state)
	assert.Equal(t, StateReady, ix.Status().State)
	assert.Contains(t, search(t, ix, "twists the widget")[0], "a.go")

	// Edit: the old words leave, the new ones arrive.
	writeTree(t, root, map[string]string{"a.go": "package a\n\n// Defenestrate throws the gizmo.\nfunc Defenestrate() {}\n"})
	ix.Changed(filepath.Join(root, "a.go"))
	ix.Update(ctx)
	assert.False(t, found(t, ix, "widget", "widget"))
	assert.Contains(t, search(t, ix, "throws gizmo")[0], "a.go:package a, Defenestrate")

	// Add, delete, rename.
	writeTree(t, root, map[string]string{"c.go": "package a\n\nfunc Zorblax() {}\n"})
	require.NoError(t, os.Remove(filepath.Join(root, "b.go")))
	require.NoError(t, os.Rename(filepath.Join(root, "a.go"), filepath.Join(root, "renamed.go")))
	ix.Changed("c.go", "b.go", "a.go", "renamed.go")
	ix.Update(ctx)
	assert.Equal(t, []string{"c.go", "renamed.go"}, indexedFiles(ix))
	assert.False(t, found(t, ix, "quux", "quux"))
	assert.Contains(t, search(t, ix, "Zorblax")[0], "c.go")
	assert.Contains(t, search(t, ix, "defenestrate")[0], "renamed.go")
	st := ix.Status()
	require.NoError(t, ix.Close())

	// Restart: the snapshot answers at once and Build re-reads nothing.
	ix2, err := Open(ctx, Options{Root: root, StateDir: state})
	require.NoError(t, err)
	assert.Contains(t, search(t, ix2, "defenestrate")[0], "renamed.go", "answers from the snapshot before Build")
	require.NoError(t, ix2.Build(ctx, nil))
	assert.Equal(t, 0, ix2.lastRead)
	assert.Equal(t, st.Files, ix2.Status().Files)
	assert.Equal(t, st.Chunks, ix2.Status().Chunks)

	// A change while the daemon was down is picked up by the next Build,
	// reading only that file.
	time.Sleep(10 * time.Millisecond) // a distinct mtime
	writeTree(t, root, map[string]string{"c.go": "package a\n\nfunc Blorptastic() {}\n"})
	require.NoError(t, ix2.Build(ctx, nil))
	assert.Equal(t, 1, ix2.lastRead)
	assert.Contains(t, search(t, ix2, "blorptastic")[0], "c.go")
	assert.False(t, found(t, ix2, "zorblax", "zorblax"))

	// A corrupt snapshot means a rebuild, not a failure.
	require.NoError(t, os.WriteFile(filepath.Join(state, "index.snapshot"), []byte("garbage"), 0o644))
	ix3 := openBuilt(t, root, state)
	assert.Equal(t, 3, ix3.lastRead, "everything, the unreadable file too")
}

func TestRankingSignals(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"config/load.go":      "package config\n\n// LoadSettings reads the settings file from disk.\nfunc LoadSettings(path string) error { return nil }\n",
		"config/parse.go":     "package config\n\n// ParseSettings parses settings text.\nfunc ParseSettings(text string) error { return nil }\n",
		"server/run.go":       "package server\n\n// Run serves requests using the settings.\nfunc Run() error { return nil }\n",
		"server/other.go":     "package server\n\n// Other serves requests using the settings.\nfunc Other() error { return nil }\n",
		"notes.md":            "# Settings\n\nSettings are loaded and parsed at start, the settings file read from disk.\n",
		"config/load_test.go": "package config\n\n// TestLoadSettings reads the settings file from disk.\nfunc TestLoadSettings(t *testing.T) { LoadSettings(\"settings file disk\") }\n",
		"api/api.pb.go":       "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage api\n\n// ParseSettings parses settings text from the wire.\nfunc ParseSettings(b []byte) error { return nil }\n",
	})
	ix := openBuilt(t, root, t.TempDir())
	// An exact symbol wins over prose that mentions the same words, and
	// over generated code that declares the same name.
	assert.Equal(t, "config/parse.go:package config, ParseSettings", search(t, ix, "ParseSettings")[0])
	// Code before its test and the docs, for the same words.
	assert.Equal(t, "config/load.go:package config, LoadSettings", search(t, ix, "read the settings file from disk")[0])
	// Unless the question asks for tests.
	assert.Equal(t, "config/load_test.go:package config, TestLoadSettings", search(t, ix, "test that reads the settings file from disk")[0])
	// Naming a file's path ranks it first.
	assert.Equal(t, "server/run.go:package server, Run", search(t, ix, "settings server run")[0])
	// An open file breaks a tie in its favour.
	base := search(t, ix, "serves requests")
	ix.SetOpen([]string{filepath.Join(root, "server/other.go")})
	assert.Equal(t, "server/other.go:package server, Other", search(t, ix, "serves requests")[0], "before: %v", base)
	// Words found nowhere: nothing matches, rather than noise.
	assert.Empty(t, search(t, ix, "purple elephant xylophone"))

	hits, _, err := ix.Search(context.Background(), "ParseSettings text", 10)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, MatchStrong, hits[0].Match)
	assert.Equal(t, 1.0, hits[0].Score)
	for _, h := range hits {
		if h.Path == "api/api.pb.go" {
			assert.Equal(t, "generated", h.Kind)
		}
	}
}

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"a.go": "package a\n"})
	ix := openBuilt(t, root, t.TempDir())
	done := make(chan error)
	go func() { done <- ix.Watch(ctx) }()
	time.Sleep(100 * time.Millisecond) // let the watches be added

	writeTree(t, root, map[string]string{"newdir/fresh.go": "package a\n\nfunc Snickersnee() {}\n"})
	start := time.Now()
	waitFor(t, func() bool { return found(t, ix, "snickersnee", "snickersnee") })
	t.Logf("a new file in a new directory was searchable %v after the write", time.Since(start))

	require.NoError(t, os.Remove(filepath.Join(root, "newdir", "fresh.go")))
	waitFor(t, func() bool { return !found(t, ix, "snickersnee", "snickersnee") })
	cancel()
	require.NoError(t, <-done)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(await.Timeout(5 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStateDirFor(t *testing.T) {
	t.Setenv("AGENTD_STATE_DIR", "/var/state")
	a, err := StateDirFor("/w/one")
	require.NoError(t, err)
	b, _ := StateDirFor("/w/two")
	assert.Equal(t, "/var/state", filepath.Dir(a))
	assert.Len(t, filepath.Base(a), 16)
	assert.NotEqual(t, a, b)
}

// TestNeverLeavesTheWorkspace: links to a directory or a file outside the
// workspace are not followed, by the walk or by the watcher, and a path
// under a directory swapped for such a link is not read; links inside the
// workspace still work.
func TestNeverLeavesTheWorkspace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{
		"secret.go":     "package secret\n\n// Xylograph is outside the workspace.\nfunc Xylograph() {}\n",
		"dir/deeper.go": "package dir\n\n// Quillwort is outside too.\nfunc Quillwort() {}\n",
	})
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"in.go":     "package in\n\n// Marmoset lives inside.\nfunc Marmoset() {}\n",
		"sub/ok.go": "package sub\n\n// Ocelot lives inside.\nfunc Ocelot() {}\n",
	})
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "outdir")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.go"), filepath.Join(root, "outfile.go")))
	require.NoError(t, os.Symlink("../in.go", filepath.Join(root, "sub", "alias.go"))) // inside: indexed

	ix := openBuilt(t, root, t.TempDir())
	assert.Equal(t, []string{"in.go", "sub/alias.go", "sub/ok.go"}, indexedFiles(ix))
	for _, word := range []string{"Xylograph", "Quillwort"} {
		assert.False(t, found(t, ix, word, word), "%s found through a link", word)
	}
	ix.mu.RLock()
	assert.Contains(t, ix.skipped, "outfile.go", "a note says why the link was skipped")
	ix.mu.RUnlock()

	// The editor or the watcher naming paths through the links changes nothing.
	ix.Changed(filepath.Join(root, "outdir", "secret.go"), filepath.Join(root, "outfile.go"), "outdir/dir/deeper.go")
	ix.Update(ctx)
	assert.Equal(t, []string{"in.go", "sub/alias.go", "sub/ok.go"}, indexedFiles(ix))

	done := make(chan error)
	go func() { done <- ix.Watch(ctx) }()
	time.Sleep(100 * time.Millisecond) // let the watches be added
	// New links appear while watching: a directory link and a file link
	// out, then a real directory swapped for a link to one outside.
	require.NoError(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "newlink")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "dir", "deeper.go"), filepath.Join(root, "newfile.go")))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "sub")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "dir"), filepath.Join(root, "sub")))
	ix.Changed("sub/deeper.go")
	writeTree(t, root, map[string]string{"marker.go": "package in\n\n// Zorilla marks the end of the test.\nfunc Zorilla() {}\n"})
	waitFor(t, func() bool { return found(t, ix, "Zorilla", "Zorilla") })
	waitFor(t, func() bool { return !found(t, ix, "Ocelot", "Ocelot") })
	for _, word := range []string{"Xylograph", "Quillwort"} {
		assert.False(t, found(t, ix, word, word), "%s found through a link", word)
	}
	assert.Equal(t, []string{"in.go", "marker.go"}, indexedFiles(ix))
	cancel()
	require.NoError(t, <-done)
}

// A .gitignore that un-ignores .git does not bring git directories into
// the index.
func TestGitDirIgnoredWhateverTheIgnoreFilesSay(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{".gitignore": "!.git/\n!.git\n", ".git/config": "[core]\n", "sub/.git/config": "[core]\n", "main.go": "package main\n"})
	ig := newIgnorer(root)
	for _, p := range []string{".git", "sub/.git"} {
		assert.True(t, ig.ignored(p, true), p)
	}
	for _, p := range []string{".git/config", "sub/.git/config"} {
		assert.True(t, ig.ignoredPath(p, false), p)
	}
	assert.False(t, ig.ignored("main.go", false))
}

// Hidden directories (agentd's own state and configuration, in a
// workspace that is the home directory) are never indexed, whatever the
// ignore files say, nor found through the watcher or the editor.
func TestHiddenDirsAreNeverIndexed(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{".gitignore": "!.cache/\n", "main.go": "package main\n",
		".local/state/agentd/abc/runs/r1/events.go": "package x // Transcriptword\n",
		".cache/agentd/abc/x.go":                    "package x // Cacheword\n",
		".config/agentd/rules.go":                   "package x // Rulesword\n"})
	ctx := context.Background()
	ix, err := Open(ctx, Options{Root: root, StateDir: t.TempDir(), Hidden: []string{
		filepath.Join(root, ".local/state/agentd"), filepath.Join(root, ".cache/agentd"), filepath.Join(root, ".config/agentd"), "/elsewhere"}})
	require.NoError(t, err)
	require.NoError(t, ix.Build(ctx, nil))
	assert.Equal(t, []string{".gitignore", "main.go"}, indexedFiles(ix))
	ix.Changed(filepath.Join(root, ".config/agentd/rules.go"), ".local/state/agentd/abc/runs/r1/events.go")
	ix.Update(ctx)
	assert.Equal(t, []string{".gitignore", "main.go"}, indexedFiles(ix))
}

// TestGoKinds: harnesses are tests, files built only under an unset tag
// are excluded, platform files are code.
func TestGoKinds(t *testing.T) {
	for src, want := range map[string]fileKind{
		"package fuzzy\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc Harness(t *testing.T) {}\n": kindTest,
		"package p\n\nimport \"testing\"\n":                                              kindTest,
		"//go:build goexperiment.jsonv2\n\npackage json\n\nfunc Marshal() {}\n":          kindExcluded,
		"//go:build ignore\n\npackage main\n":                                            kindExcluded,
		"//go:build integration && linux\n\npackage e2e\n":                               kindExcluded,
		"//go:build linux && !cgo\n\npackage net\n":                                      kindCode,
		"//go:build windows || (darwin && arm64)\n\npackage os\n":                        kindCode,
		"//go:build !goexperiment.jsonv2\n\npackage json\n":                              kindCode,
		"// +build ignore\n\npackage main\n":                                             kindExcluded,
		"package p\n\n// testing is mentioned in prose.\nfunc F() { _ = \"testing\" }\n": kindCode,
		"package p\n\nimport (\n\t\"fmt\"\n)\n\nvar x = `\n\"testing\"\n`\n":             kindCode,
	} {
		assert.Equal(t, want, goKindOf(src), src)
	}
}
