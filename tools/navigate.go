package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The navigation tools (go_to_definition, find_references, hover) ask the
// language servers about a symbol the model names by its text, in a file
// and on a line: models count columns badly, and a name on a line is how
// they read code. Locations come back as path:line:column with the line
// itself.

// SymbolParams name a symbol: its text, and where it is used.
type SymbolParams struct {
	Symbol string `json:"symbol" min:"1" jsonschema:"The identifier as written in the code, e.g. Total (for cart.Total, just Total)."`
	Path   string `json:"path,omitempty" jsonschema:"A file where the symbol appears, relative to the workspace root. Without it the symbol is looked up by name in the whole workspace."`
	Line   int    `json:"line,omitempty" min:"1" jsonschema:"The line of path where the symbol appears (1-based). Without it: where path declares the symbol, else its first use in path."`
}

// DefaultLanguageTimeout bounds a navigation call's wait for its language
// server when Env.LanguageTimeout is not set (a cold server loads the
// workspace first).
const DefaultLanguageTimeout = 20 * time.Second

// Bounds of what the navigation tools return.
const (
	maxDefinitions  = 20
	maxReferences   = 100
	maxHoverBytes   = 4 << 10
	maxContextChars = 200
)

// navTimeout is the wait the env allows a navigation call.
func (e *Env) navTimeout() time.Duration {
	if e.LanguageTimeout > 0 {
		return e.LanguageTimeout
	}
	return DefaultLanguageTimeout
}

// checkSymbol checks a navigation call's arguments; rel is path made
// workspace-relative, abs absolute ("" without a path).
func checkSymbol(env *Env, p *SymbolParams) (abs, rel string, r *Result) {
	p.Symbol = strings.TrimSpace(p.Symbol)
	if p.Symbol == "" {
		return "", "", Errorf("symbol is required: the identifier as written in the code")
	}
	if strings.ContainsAny(p.Symbol, " \t\n(") {
		return "", "", Errorf("symbol must be one identifier as written in the code (e.g. Total), not %q", p.Symbol)
	}
	if p.Line > 0 && p.Path == "" {
		return "", "", Errorf("line needs path: the file whose line it is")
	}
	if p.Path == "" {
		return "", "", nil
	}
	return confine(env, p.Path)
}

// prepareNavigation is the Prepare all navigation tools share once their
// arguments are decoded: it checks p (trimming its symbol in place) and
// refuses without a language server. The call finds where to ask (sources.target) and asks there, all within the
// env's navigation timeout.
func prepareNavigation(env *Env, p *SymbolParams, title string, ask func(ctx context.Context, lang Language, src *sources, at TextPosition) Result) (*Call, *Result) {
	abs, rel, r := checkSymbol(env, p)
	if r != nil {
		return nil, r
	}
	lang, r := languageOf(env)
	if r != nil {
		return nil, r
	}
	c := &Call{Title: title + p.Symbol, Run: func(ctx context.Context) (Result, error) {
		ctx, cancel := context.WithTimeout(ctx, env.navTimeout())
		defer cancel()
		src := newSources(env)
		at, r := src.target(ctx, lang, *p, abs, rel)
		if r != nil {
			return *r, nil
		}
		return ask(ctx, lang, src, at), nil
	}}
	if rel != "" {
		c.Reads = []string{rel}
		c.Locations = []Location{{Path: rel, Line: p.Line}}
	}
	return c, nil
}

// languageOf is the env's language servers, or the refusal the model reads.
func languageOf(env *Env) (Language, *Result) {
	if env.Language == nil {
		return nil, Errorf("No language server answers in this session now (the editor offers none, and agentd runs none): use grep and read_file instead.")
	}
	return env.Language, nil
}

// target is where a navigation call asks: the symbol at path:line, where
// path declares it, its first use in path, or (no path) its declaration
// found by name in the workspace. A result is a refusal, or the list of
// declarations to choose from when the name is ambiguous.
func (src *sources) target(ctx context.Context, lang Language, p SymbolParams, abs, rel string) (TextPosition, *Result) {
	if abs == "" {
		return src.declarationByName(ctx, lang, p.Symbol)
	}
	content, err := readContent(ctx, src.env, abs)
	if err != nil {
		return TextPosition{}, Errorf("reading %s: %v", rel, err)
	}
	lines := strings.Split(string(content), "\n")
	src.files[abs] = lines
	if p.Line > 0 {
		if p.Line > len(lines) {
			return TextPosition{}, Errorf("%s has %d lines; line %d does not exist", rel, len(lines), p.Line)
		}
		line := lines[p.Line-1]
		col := wordIndex(line, p.Symbol)
		if col < 0 {
			return TextPosition{}, Errorf("%s:%d does not contain %q: %s\nGive the line where the symbol appears (read_file or grep find it).", rel, p.Line, p.Symbol, strings.TrimSpace(cutAtRune(line, maxContextChars)))
		}
		return TextPosition{Path: abs, Line: p.Line - 1, Character: UTF16Column(line, col)}, nil
	}
	if pos, ok := declaredIn(ctx, lang, abs, p.Symbol); ok {
		return pos, nil
	}
	for i, line := range lines {
		if col := wordIndex(line, p.Symbol); col >= 0 {
			return TextPosition{Path: abs, Line: i, Character: UTF16Column(line, col)}, nil
		}
	}
	return TextPosition{}, Errorf("%s does not contain %q", rel, p.Symbol)
}

// wordIndex is the byte offset of the first whole-word occurrence of word
// in line, -1 if none.
func wordIndex(line, word string) int {
	re, err := regexp.Compile(`(^|[^\pL\pN_$])` + regexp.QuoteMeta(word) + `($|[^\pL\pN_$])`)
	if err != nil {
		return strings.Index(line, word)
	}
	m := re.FindStringSubmatchIndex(line)
	if m == nil {
		return -1
	}
	return m[3] // the end of the group before the word
}

// declaredIn finds where file declares name, from its document symbols.
func declaredIn(ctx context.Context, lang Language, file, name string) (TextPosition, bool) {
	syms, err := lang.DocumentSymbols(ctx, file)
	if err != nil {
		return TextPosition{}, false
	}
	var find func([]Symbol) (TextPosition, bool)
	find = func(ss []Symbol) (TextPosition, bool) {
		for _, s := range ss {
			if s.Name == name {
				r := s.Location.Range
				if s.Selection != nil {
					r = *s.Selection
				}
				return TextPosition{Path: s.Location.Path, Line: r.Start.Line, Character: r.Start.Character}, true
			}
			if pos, ok := find(s.Children); ok {
				return pos, true
			}
		}
		return TextPosition{}, false
	}
	return find(syms)
}

// declarationByName finds the one declaration of name in the workspace.
func (src *sources) declarationByName(ctx context.Context, lang Language, name string) (TextPosition, *Result) {
	syms, err := lang.WorkspaceSymbols(ctx, name)
	if err != nil {
		return TextPosition{}, languageFailure(err, "looking up "+name)
	}
	exact := slices.DeleteFunc(slices.Clone(syms), func(s Symbol) bool { return s.Name != name })
	switch len(exact) {
	case 0:
		var b strings.Builder
		fmt.Fprintf(&b, "No declaration named %s found in the workspace.", name)
		if len(syms) > 0 {
			b.WriteString(" Similar names:")
			for _, s := range syms[:min(len(syms), 10)] {
				b.WriteString("\n" + src.symbolLine(ctx, s))
			}
		}
		b.WriteString("\nGive path and line of a place where the symbol is used.")
		return TextPosition{}, &Result{Output: b.String(), IsError: true}
	case 1:
		s := exact[0]
		return TextPosition{Path: s.Location.Path, Line: s.Location.Range.Start.Line, Character: s.Location.Range.Start.Character + src.nameOffset(ctx, s)}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d declarations are named %s; call again with the path and line of the one you mean:", len(exact), name)
	for _, s := range exact[:min(len(exact), maxDefinitions)] {
		b.WriteString("\n" + src.symbolLine(ctx, s))
	}
	return TextPosition{}, &Result{Output: b.String(), IsError: true}
}

// nameOffset moves from the start of a symbol's range (which may begin
// with "func" or "export class") to its name, in UTF-16 units.
func (src *sources) nameOffset(ctx context.Context, s Symbol) int {
	line, ok := src.line(ctx, s.Location.Path, s.Location.Range.Start.Line)
	if !ok {
		return 0
	}
	start := ByteColumn(line, s.Location.Range.Start.Character)
	if i := wordIndex(line[start:], s.Name); i >= 0 {
		return UTF16Column(line, start+i) - s.Location.Range.Start.Character
	}
	return 0
}

func (src *sources) symbolLine(ctx context.Context, s Symbol) string {
	what := s.Kind + " " + s.Name
	if s.Container != "" {
		what += " in " + s.Container
	}
	return src.locationLine(ctx, s.Location) + "  (" + what + ")"
}

// head is where a call asked, as path:line:column.
func (s *sources) head(ctx context.Context, at TextPosition) string {
	return headOf(s.locationLine(ctx, TextLocation{Path: at.Path, Range: pointRange(at)}))
}

// locationLine shows a location as path:line:column: the line's text. The
// text of a file outside the workspace is shown only where the sandbox
// lets commands read anyway (the system, the toolchains' sources).
func (s *sources) locationLine(ctx context.Context, loc TextLocation) string {
	line, ok := s.line(ctx, loc.Path, loc.Range.Start.Line)
	col := loc.Range.Start.Character + 1
	if ok {
		col = len([]rune(line[:ByteColumn(line, loc.Range.Start.Character)])) + 1
	}
	head := fmt.Sprintf("%s:%d:%d", shownPath(s.env.Root, loc.Path), loc.Range.Start.Line+1, col)
	switch {
	case ok:
		return head + ": " + strings.TrimSpace(cutAtRune(line, maxContextChars))
	case !within(s.env.Root, loc.Path) && !readableOutside(loc.Path):
		return head + " (outside the workspace)"
	}
	return head
}

// sources reads the lines of the files one navigation call shows, each
// file once: through the editor inside the workspace (the positions are
// its buffers'), from the disk where the sandbox lets any command read.
type sources struct {
	env   *Env
	files map[string][]string // nil: not readable
}

func newSources(env *Env) *sources { return &sources{env: env, files: map[string][]string{}} }

// line is line n (0-based) of path.
func (s *sources) line(ctx context.Context, path string, n int) (string, bool) {
	lines, ok := s.files[path]
	if !ok {
		lines = s.read(ctx, path)
		s.files[path] = lines
	}
	if n < 0 || n >= len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[n], "\r"), true
}

func (s *sources) read(ctx context.Context, path string) []string {
	var content []byte
	var err error
	switch {
	case within(s.env.Root, path):
		// As read_file: never agentd's own files (a workspace that is the
		// home directory holds its configuration, the model's key
		// included), named or through a link.
		if _, _, refused := confine(s.env, path); refused != nil {
			return nil
		}
		content, err = readContent(ctx, s.env, path)
	case readableOutside(path):
		content, err = readSmallFile(path)
	default:
		return nil
	}
	if err != nil || isBinary(content) {
		return nil
	}
	return strings.Split(string(content), "\n")
}

// readSmallFile reads a file outside the workspace of at most maxFileBytes,
// where its links lead too (Debian's /usr/lib/ssl/private is a link to
// /etc/ssl/private).
func readSmallFile(path string) ([]byte, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !readableOutside(real) {
		return nil, fmt.Errorf("%s leads to %s, which is not shown", path, real)
	}
	path = real
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("%s is not a small regular file", path)
	}
	return os.ReadFile(path)
}

// readableOutside says whether a confined command could read path anyway:
// the system's files and the toolchains' sources (Go's root and module
// cache, Rust's sources), where definitions outside the workspace lie.
// The user's other files are not shown: a hostile repository's
// configuration could point a definition at any file.
func readableOutside(path string) bool {
	path = filepath.Clean(path)
	for _, d := range outsideDirs() {
		if d != "" && within(d, path) {
			return true
		}
	}
	return false
}

func outsideDirs() []string {
	dirs := []string{"/usr", "/opt", "/nix/store", os.Getenv("GOROOT"), os.Getenv("GOMODCACHE")}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "pkg", "mod"), filepath.Join(home, ".rustup", "toolchains"),
			filepath.Join(home, ".cargo", "registry"), filepath.Join(home, "sdk"))
	}
	for _, gp := range filepath.SplitList(os.Getenv("GOPATH")) {
		if filepath.IsAbs(gp) {
			dirs = append(dirs, filepath.Join(gp, "pkg", "mod"))
		}
	}
	return dirs
}

// languageFailure is what the model reads when the servers could not
// answer.
func languageFailure(err error, doing string) *Result {
	switch {
	case errors.Is(err, ErrNoLanguageServer):
		return Errorf("No language server answers for this (%s): use grep and read_file instead.", errText(err))
	case errors.Is(err, context.DeadlineExceeded):
		return Errorf("The language server did not answer in time (%s); it may still be loading the workspace. Try again later, or use grep.", doing)
	}
	return Errorf("The language server failed %s: %v", doing, err)
}

// sortLocations orders locations by file, then place, without duplicates.
func sortLocations(locs []TextLocation) []TextLocation {
	slices.SortFunc(locs, func(a, b TextLocation) int {
		if a.Path != b.Path {
			return strings.Compare(a.Path, b.Path)
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line - b.Range.Start.Line
		}
		return a.Range.Start.Character - b.Range.Start.Character
	})
	return slices.CompactFunc(locs, func(a, b TextLocation) bool { return a.Path == b.Path && a.Range.Start == b.Range.Start })
}
