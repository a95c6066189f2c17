package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/bits"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/rag"
	"github.com/agentd/agentd/tools"
)

// The repository map: the workspace's files with their main symbols, from
// universal-ctags, the most referenced source first. It goes into a new
// session's system message, so it is made before the session's first
// request or not at all: the request waits for it a bounded time, and a map
// not ready by then is abandoned (its ctags killed). Nothing is started for
// a session that already has its prefix, and nothing outlives the Agent.

const (
	// repoMapCap bounds the map (~1.5k tokens); repoMapBudget lowers it
	// for a small context window.
	repoMapCap = 6000
	// maxMapFiles bounds the files given to ctags and scanned for
	// references.
	maxMapFiles = 1000
	// maxScanBytes skips bigger files when counting references.
	maxScanBytes = 256 << 10
	// maxSymbolsShown per file; the others are counted.
	maxSymbolsShown = 12
	// repoMapFresh is how long a map serves new sessions.
	repoMapFresh = 10 * time.Minute
	// maxDefiners: a name defined in more files than this (String, New)
	// says nothing about which file another one uses.
	maxDefiners = 8
)

// repoMapWait bounds how long a session's first request waits for the map.
var repoMapWait = 3 * time.Second

// repoMapBudget is the map's size for a context window (0: unknown).
func repoMapBudget(window int) int {
	if window <= 0 {
		return repoMapCap
	}
	return min(repoMapCap, window/4) // a sixteenth of the window, at four bytes a token
}

type repoMapper struct {
	mu      sync.Mutex // guards the fields below
	build   *mapBuild  // the build under way, if any
	tags    *repoTags  // the last map built
	builtAt time.Time
	failed  bool // a build was abandoned or failed: no map for this agent
}

type mapBuild struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// repoMapFor returns the map within budget bytes, waiting repoMapWait at
// most for a build; "" when there is none.
func (a *Agent) repoMapFor(ctx context.Context, budget int) string {
	m := &a.rmap
	if b := m.start(a.sandbox, a.cfg.Root, a.log.Warn); b != nil {
		timer := time.NewTimer(repoMapWait)
		defer timer.Stop()
		select {
		case <-b.done:
		case <-timer.C:
			a.log.Warn("the repository map was not ready in time; sessions go without it", "waited", repoMapWait)
			m.abandon(b)
		case <-ctx.Done(): // the run stopped; the build goes on for the next (Shutdown kills it)
		}
	}
	m.mu.Lock()
	tags := m.tags
	m.mu.Unlock()
	if tags == nil {
		return ""
	}
	return tags.format(budget)
}

// start begins a build unless a fresh map exists or maps failed here; it
// returns the build to wait for, nil when there is nothing to wait for.
func (m *repoMapper) start(sb *tools.Sandbox, root string, warn func(string, ...any)) *mapBuild {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.failed:
		return nil
	case m.build != nil:
		return m.build
	case m.tags != nil && time.Since(m.builtAt) < repoMapFresh:
		return nil
	}
	bin, err := exec.LookPath("ctags")
	if err != nil {
		m.failed = true
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &mapBuild{cancel: cancel, done: make(chan struct{})}
	m.build = b
	go func() {
		defer close(b.done)
		defer cancel()
		tags, err := buildRepoTags(ctx, sb, bin, root)
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.build == b {
			m.build = nil
		}
		switch {
		case ctx.Err() != nil:
		case err != nil:
			warn("no repository map", "err", err)
			m.failed = true
		default:
			m.tags, m.builtAt = tags, time.Now()
		}
	}()
	return b
}

// abandon kills a build no one will wait for, and gives up maps for this
// agent: a workspace too big for the wait will not do better next time.
func (m *repoMapper) abandon(b *mapBuild) {
	m.mu.Lock()
	m.failed = true
	m.mu.Unlock()
	b.cancel()
	<-b.done
}

// stop kills a build under way and waits for it (Agent.Shutdown).
func (m *repoMapper) stop() {
	m.mu.Lock()
	b := m.build
	m.mu.Unlock()
	if b != nil {
		b.cancel()
		<-b.done
	}
}

// repoTags is what a build found: each file's symbols, and how many source
// and test files the workspace has in all.
type repoTags struct {
	files         []fileTags
	sources, test int
}

type fileTags struct {
	path  string
	test  bool
	score int // other files that use one of its symbols
	syms  []symbol
}

type symbol struct {
	name, shown string
	line        int
	rank        int // 0 a type, 1 a function, 2 a method
	refs        int // files other than its own that mention it
}

// typeKinds are the tags that declare types; methods are tags with a type
// scope. Method names (String, text) are too common to say which file
// another one uses: only types and functions count as references.
var typeKinds = []string{"type", "struct", "interface", "class", "module", "enum", "trait", "talias"}

// buildRepoTags lists the workspace's source files, runs ctags on the first
// maxMapFiles of them and ranks files and symbols by references. ctags runs
// like every process agentd starts: in the kernel sandbox's read profile
// (which ends it with the daemon), never following a link out of the
// workspace.
func buildRepoTags(ctx context.Context, sb *tools.Sandbox, bin, root string) (*repoTags, error) {
	files, sources, tests, err := mapFiles(ctx, root)
	if err != nil {
		return nil, err
	}
	out := &repoTags{sources: sources, test: tests}
	if len(files) == 0 {
		return out, nil
	}
	data, err := sb.Output(ctx, root, root, strings.NewReader(strings.Join(files, "\n")+"\n"),
		bin, "--links=no", "--output-format=json", "--fields=-P+nKsZ", "--sort=no", "-L", "-", "-f", "-")
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("ctags (universal-ctags is needed): %w", err)
	}
	byPath := parseTags(data)
	for _, f := range files {
		if syms := byPath[f]; len(syms) > 0 {
			out.files = append(out.files, fileTags{path: f, test: isTestPath(f), syms: syms})
		}
	}
	countReferences(ctx, root, out.files)
	return out, nil
}

// mapKinds are the tags worth a line of the map.
var mapKinds = []string{"function", "func", "method", "type", "struct", "interface", "class", "module", "enum", "trait", "talias"}

// parseTags reads ctags' JSON lines into each file's symbols, tests' own
// functions (TestX, BenchmarkX, test_x) left out.
func parseTags(out []byte) map[string][]symbol {
	byPath := map[string][]symbol{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var tag struct {
			Name, Path, Kind, Scope string
			ScopeKind               string `json:"scopeKind"`
			Line                    int
		}
		if json.Unmarshal(sc.Bytes(), &tag) != nil || !slices.Contains(mapKinds, tag.Kind) || isTestSymbol(tag.Name) {
			continue
		}
		p := strings.TrimPrefix(filepath.ToSlash(tag.Path), "./")
		sym := symbol{name: tag.Name, shown: tag.Name, line: tag.Line, rank: 1}
		switch {
		case slices.Contains(typeKinds, tag.Kind):
			sym.rank = 0
		case tag.ScopeKind == "" || slices.Contains([]string{"package", "namespace", "module", "file"}, tag.ScopeKind):
		default: // a method: show its type
			sym.shown = tag.Scope[strings.LastIndexAny(tag.Scope, ".:")+1:] + "." + tag.Name
			sym.rank = 2
		}
		byPath[p] = append(byPath[p], sym)
	}
	return byPath
}

// isTestSymbol says a name is a test, benchmark, example or fuzz target.
func isTestSymbol(name string) bool {
	if strings.HasPrefix(name, "test_") || name == "setUp" || name == "tearDown" {
		return true
	}
	for _, p := range []string{"Test", "Benchmark", "Example", "Fuzz"} {
		if rest, ok := strings.CutPrefix(name, p); ok && (rest == "" || rest[0] == '_' || rest[0] >= 'A' && rest[0] <= 'Z') {
			return true
		}
	}
	return false
}

// countReferences scores each file by the other files of its language
// that mention one of its types or functions, and each symbol by the files
// that mention it. A name many files define tells nothing and is not
// counted.
func countReferences(ctx context.Context, root string, files []fileTags) {
	definers := map[string][]int{} // distinctive names, by the files defining them
	scoring := map[string]bool{}   // names that are a type or function somewhere
	for i, f := range files {
		for _, s := range f.syms {
			if !distinctive(s.name) {
				continue
			}
			if !slices.Contains(definers[s.name], i) {
				definers[s.name] = append(definers[s.name], i)
			}
			scoring[s.name] = scoring[s.name] || s.rank < 2
		}
	}
	words := (len(files) + 63) / 64
	usedBy := make([][]uint64, len(files))
	for i := range usedBy {
		usedBy[i] = make([]uint64, words)
	}
	mentions := map[string]int{}
	for i, f := range files {
		if ctx.Err() != nil {
			return
		}
		data, fi, err := tools.ReadWorkspaceFile(root, f.path, maxScanBytes)
		if err != nil || data == nil && fi.Size() > 0 {
			continue // gone, too big, not a regular file, or a link out of the workspace
		}
		lang := langOf(f.path)
		for name := range identifiers(data, definers) {
			ds := definers[name]
			if len(ds) > maxDefiners || slices.Contains(ds, i) {
				continue
			}
			for _, d := range ds {
				if langOf(files[d].path) == lang {
					mentions[name]++
					if scoring[name] {
						usedBy[d][i/64] |= 1 << (i % 64)
					}
					break
				}
			}
		}
	}
	for i := range files {
		n := 0
		for _, w := range usedBy[i] {
			n += bits.OnesCount64(w)
		}
		files[i].score = n
		for k := range files[i].syms {
			files[i].syms[k].refs = mentions[files[i].syms[k].name]
		}
	}
}

// distinctive says a name is unlikely to be an everyday word: plain
// lowercase words (run, value, one) also appear in comments and as local
// names everywhere, so only names with a capital, a digit or an underscore
// count as references.
func distinctive(name string) bool {
	return len(name) >= 3 && strings.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' })
}

// langOf groups files whose code can refer to each other's names.
func langOf(p string) string {
	switch ext := path.Ext(p); ext {
	case ".js", ".jsx", ".ts", ".tsx", ".mjs", ".vue", ".svelte":
		return ".js"
	case ".c", ".h", ".cc", ".cpp", ".hpp":
		return ".c"
	case ".java", ".kt", ".scala":
		return ".java"
	case ".ex", ".exs":
		return ".ex"
	default:
		return ext
	}
}

// identifiers returns the distinct identifiers of data that are in names.
func identifiers(data []byte, names map[string][]int) map[string]bool {
	out := map[string]bool{}
	for i := 0; i < len(data); {
		c := data[i]
		if !isIdentStart(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(data) && (isIdentStart(data[j]) || data[j] >= '0' && data[j] <= '9') {
			j++
		}
		if _, ok := names[string(data[i:j])]; ok {
			out[string(data[i:j])] = true
		}
		i = j
	}
	return out
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// format writes the map within budget bytes: source files before tests,
// each group by score, then path; a closing line counts what is left out.
func (t *repoTags) format(budget int) string {
	files := slices.Clone(t.files)
	slices.SortStableFunc(files, func(a, b fileTags) int {
		switch {
		case a.test != b.test:
			if a.test {
				return 1
			}
			return -1
		case a.score != b.score:
			return b.score - a.score
		}
		return strings.Compare(a.path, b.path)
	})
	var b strings.Builder
	b.WriteString("Files with their main functions and types, the most used first, tests last (from ctags, when this conversation started):\n")
	shownSrc, shownTest := 0, 0
	for _, f := range files {
		line := f.line()
		if b.Len()+len(line) > budget-120 { // room for the closing line
			break
		}
		b.WriteString(line)
		if f.test {
			shownTest++
		} else {
			shownSrc++
		}
	}
	if shownSrc+shownTest == 0 {
		return ""
	}
	if src, tst := t.sources-shownSrc, t.test-shownTest; src > 0 || tst > 0 {
		fmt.Fprintf(&b, "[… and %s not shown; list_dir, glob_file_search and grep find them]\n", plural2(src, "source file", tst, "test file"))
	}
	return b.String()
}

// line is one file's line of the map: its symbols, most mentioned first.
func (f fileTags) line() string {
	syms := slices.Clone(f.syms)
	slices.SortStableFunc(syms, func(a, b symbol) int {
		if ta, tb := a.rank == 0, b.rank == 0; ta != tb { // types first
			if ta {
				return -1
			}
			return 1
		}
		return b.refs - a.refs
	})
	names := make([]string, 0, min(len(syms), maxSymbolsShown))
	for _, s := range syms {
		if len(names) == maxSymbolsShown {
			break
		}
		if !slices.Contains(names, s.shown) {
			names = append(names, s.shown)
		}
	}
	more := ""
	if n := len(syms) - len(names); n > 0 {
		more = fmt.Sprintf(" (+%d more)", n)
	}
	return fmt.Sprintf("%s: %s%s\n", f.path, strings.Join(names, ", "), more)
}

func plural2(n1 int, what1 string, n2 int, what2 string) string {
	one := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	switch {
	case n1 > 0 && n2 > 0:
		return one(n1, what1) + " and " + one(n2, what2)
	case n1 > 0:
		return one(n1, what1)
	}
	return one(n2, what2)
}

// sourceExts are the files ctags maps.
var sourceExts = map[string]bool{".go": true, ".py": true, ".js": true, ".jsx": true, ".ts": true, ".tsx": true, ".mjs": true,
	".rs": true, ".java": true, ".kt": true, ".scala": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true,
	".cs": true, ".rb": true, ".php": true, ".swift": true, ".lua": true, ".ex": true, ".exs": true, ".erl": true, ".hs": true,
	".ml": true, ".dart": true, ".zig": true, ".vue": true, ".svelte": true}

// skippedDirs hold no code of the project's own.
var skippedDirs = map[string]bool{"node_modules": true, "vendor": true, "dist": true, "build": true, "target": true,
	"testdata": true, "__pycache__": true, ".venv": true, "venv": true, "third_party": true}

// mapFiles lists the workspace's source files as the index sees them
// (.gitignore honoured): source before tests, shallow before deep, at most
// maxMapFiles; and counts all of them.
func mapFiles(ctx context.Context, root string) (files []string, sources, tests int, err error) {
	ign := rag.NewIgnore(root)
	var all []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p == root {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") || skippedDirs[name] || ign.Ignored(rel, true) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !sourceExts[path.Ext(name)] || ign.Ignored(rel, false) {
			return nil
		}
		all = append(all, rel)
		if isTestPath(rel) {
			tests++
		} else {
			sources++
		}
		return nil
	})
	if err != nil {
		return nil, 0, 0, err
	}
	slices.SortFunc(all, func(a, b string) int {
		if ta, tb := isTestPath(a), isTestPath(b); ta != tb {
			if ta {
				return 1
			}
			return -1
		}
		if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
			return da - db
		}
		return strings.Compare(a, b)
	})
	return all[:min(len(all), maxMapFiles)], sources, tests, nil
}

// isTestPath says a file is a test by its name or directory.
func isTestPath(rel string) bool {
	base := path.Base(rel)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(stem, "_test"), strings.HasPrefix(stem, "test_"), strings.HasSuffix(stem, ".test"), strings.HasSuffix(stem, ".spec"),
		strings.HasSuffix(stem, "Test") && path.Ext(base) == ".java":
		return true
	}
	for _, seg := range strings.Split(path.Dir(rel), "/") {
		if seg == "test" || seg == "tests" || seg == "__tests__" || seg == "spec" {
			return true
		}
	}
	return false
}
