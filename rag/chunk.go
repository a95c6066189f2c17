package rag

import (
	"fmt"
	"path"
	"strings"
)

// Chunk sizes in bytes. Small declarations are merged up to mergeTarget so a
// run of one-line consts is one hit, not ten; declarations over maxChunk are
// split near splitTarget at blank lines. Continue's 500-token cap and Zed's
// 1–8 KB are the anchors.
const (
	mergeTarget = 1500
	splitTarget = 2000
	maxChunk    = 4000
)

// chunk is a contiguous range of lines of one file.
type chunk struct {
	Path   string   // workspace-relative, slash-separated
	Start  int      // first line, 1-based
	End    int      // last line, inclusive
	Symbol string   // declarations covered, comma-separated, the first few of many; may be empty
	Names  []string // every declaration covered
	Lang   string
	Off    int // byte offset of the first line in the file
	Len    int // raw byte length of the lines (before \r\n → \n)
	Flags  uint8
	Text   string
}

func indexText(path, symbol, text string) string {
	return path + " " + symbol + "\n" + text
}

// appendIndexText appends the index text to buf without building a string.
func appendIndexText(buf []byte, path, symbol, text string) []byte {
	buf = append(buf, path...)
	buf = append(buf, ' ')
	buf = append(buf, symbol...)
	buf = append(buf, '\n')
	return append(buf, text...)
}

// cleanText turns the raw bytes of a line range into chunk text: line ends
// lose their \r, as splitLines does.
func cleanText(raw string) string {
	if strings.IndexByte(raw, '\r') < 0 {
		return raw
	}
	return strings.TrimSuffix(strings.ReplaceAll(raw, "\r\n", "\n"), "\r")
}

// segment is a declaration (or block) before merging and splitting.
type segment struct {
	start, end int
	symbols    []string
	funcs      bool // declares a function
	header     bool // holds the package clause (and usually the imports)
}

// Chunk flags, kept per chunk for ranking within a file.
const (
	chunkFunc   uint8 = 1 << iota // declares a function
	chunkHeader                   // the file's package clause and imports
)

func chunkFile(rel, src string) []chunk {
	lang := languageOf(rel)
	lines, starts := splitLines(src)
	var segs []segment
	if lang == "go" {
		segs = goSegments(src, lines)
	}
	if segs == nil {
		segs = blockSegments(lines, lang)
	}
	segs = splitLarge(mergeSmall(trimBlank(segs, lines), lines), lines)
	out := make([]chunk, 0, len(segs))
	for _, s := range segs {
		// The text is a substring of src (no copy) unless it has \r\n ends.
		off := starts[s.start-1]
		end := starts[s.end-1] + len(lines[s.end-1])
		if end < len(src) && src[end] == '\r' {
			end++
		}
		var flags uint8
		if s.funcs {
			flags |= chunkFunc
		}
		if s.header {
			flags |= chunkHeader
		}
		out = append(out, chunk{
			Path:   rel,
			Start:  s.start,
			End:    s.end,
			Symbol: joinSymbols(s.symbols),
			Names:  s.symbols,
			Lang:   lang,
			Off:    off,
			Len:    end - off,
			Flags:  flags,
			Text:   cleanText(src[off:end]),
		})
	}
	return out
}

// goSegments returns one segment per top-level declaration, each extended
// upwards to the end of the previous one so doc comments, free-floating
// comments and the package clause are never lost. It returns nil when the
// file is not Go the lexer can follow, and the caller falls back to
// blank-line blocks.
func goSegments(src string, lines []string) []segment {
	pkgLine, pkg, decls, ok := goDecls(src)
	if !ok || len(decls) == 0 {
		return nil
	}
	segs := []segment{{start: 1, symbols: []string{"package " + pkg}, header: true}}
	_ = pkgLine
	for _, d := range decls {
		prev := &segs[len(segs)-1]
		if prev.end == 0 {
			prev.end = docStart(lines, d.first) - 1
		}
		seg := segment{start: prev.end + 1, end: min(len(lines), d.last), symbols: d.symbols, funcs: d.isFunc}
		if seg.start > seg.end {
			continue // two declarations on one line: already covered
		}
		segs = append(segs, seg)
	}
	if segs[0].end < segs[0].start {
		segs = segs[1:]
	}
	segs[len(segs)-1].end = len(lines)
	return segs
}

// docStart is the first line of the comment block right above line (1-based).
func docStart(lines []string, line int) int {
	for line > 1 && strings.HasPrefix(strings.TrimSpace(lines[line-2]), "//") {
		line--
	}
	return line
}

// blockSegments cuts at blank lines; the symbol is a markdown heading or the
// name on a definition-looking first line.
func blockSegments(lines []string, lang string) []segment {
	var segs []segment
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			if start == 0 {
				start = i + 1
			}
			continue
		}
		if start != 0 {
			segs = append(segs, segment{start: start, end: i, symbols: blockSymbol(lines[start-1], lang)})
			start = 0
		}
	}
	return segs
}

var defKeywords = []string{"func ", "def ", "class ", "function ", "fn ", "pub fn ", "async fn ", "async def ",
	"interface ", "struct ", "enum ", "trait ", "impl ", "type ", "module ", "export function ",
	"export class ", "export default function ", "export const ", "const ", "let ", "var ", "public ",
	"private ", "protected ", "static "}

func blockSymbol(line, lang string) []string {
	t := strings.TrimSpace(line)
	if lang == "markdown" && strings.HasPrefix(t, "#") {
		return []string{strings.TrimSpace(strings.TrimLeft(t, "#"))}
	}
	for _, kw := range defKeywords {
		if !strings.HasPrefix(t, kw) {
			continue
		}
		rest := strings.TrimSpace(t[len(kw):])
		end := strings.IndexFunc(rest, func(r rune) bool {
			return !(r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		})
		if end < 0 {
			end = len(rest)
		}
		if name := rest[:end]; name != "" {
			return []string{name}
		}
		return nil
	}
	return nil
}

// trimBlank moves each segment's start past leading blank lines.
func trimBlank(segs []segment, lines []string) []segment {
	out := segs[:0]
	for _, s := range segs {
		for s.start <= s.end && strings.TrimSpace(lines[s.start-1]) == "" {
			s.start++
		}
		for s.end >= s.start && strings.TrimSpace(lines[s.end-1]) == "" {
			s.end--
		}
		if s.start <= s.end {
			out = append(out, s)
		}
	}
	return out
}

func mergeSmall(segs []segment, lines []string) []segment {
	var out []segment
	size := 0
	for _, s := range segs {
		n := rangeSize(lines, s.start, s.end)
		if len(out) > 0 && size+n <= mergeTarget {
			last := &out[len(out)-1]
			last.end = s.end
			last.symbols = append(last.symbols, s.symbols...)
			last.funcs = last.funcs || s.funcs
			last.header = last.header || s.header
			size += n
			continue
		}
		out = append(out, s)
		size = n
	}
	return out
}

// splitLarge cuts oversized segments at the first blank line past
// splitTarget, or hard at maxChunk; every piece keeps the symbol.
func splitLarge(segs []segment, lines []string) []segment {
	var out []segment
	for _, s := range segs {
		if rangeSize(lines, s.start, s.end) <= maxChunk {
			out = append(out, s)
			continue
		}
		start, size := s.start, 0
		for i := s.start; i <= s.end; i++ {
			size += len(lines[i-1]) + 1
			blank := strings.TrimSpace(lines[i-1]) == ""
			if i < s.end && (size >= splitTarget && blank || size >= maxChunk) {
				out = append(out, segment{start: start, end: i, symbols: s.symbols, funcs: s.funcs, header: s.header && start == s.start})
				start, size = i+1, 0
			}
		}
		if start <= s.end {
			out = append(out, segment{start: start, end: s.end, symbols: s.symbols, funcs: s.funcs, header: s.header && start == s.start})
		}
	}
	return trimBlankNoLines(out)
}

// trimBlankNoLines drops pieces that a split left empty.
func trimBlankNoLines(segs []segment) []segment {
	out := segs[:0]
	for _, s := range segs {
		if s.start <= s.end {
			out = append(out, s)
		}
	}
	return out
}

func rangeSize(lines []string, start, end int) int {
	n := 0
	for i := start; i <= end; i++ {
		n += len(lines[i-1]) + 1
	}
	return n
}

// maxSymbolText bounds a chunk's symbol line: a block of forty constants
// shows the first few names and how many more there are (the lookup keys
// still cover all of them).
const maxSymbolText = 80

func joinSymbols(syms []string) string {
	var b strings.Builder
	for i, s := range syms {
		if i > 0 && b.Len()+len(s) > maxSymbolText {
			fmt.Fprintf(&b, ", … (+%d)", len(syms)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s)
	}
	return b.String()
}

// splitLines returns the lines of src without their \n or \r\n ends, and
// the byte offset where each starts.
func splitLines(src string) (lines []string, starts []int) {
	src = strings.TrimSuffix(src, "\n")
	n := strings.Count(src, "\n") + 1
	lines = make([]string, 0, n)
	starts = make([]int, 0, n)
	for off := 0; ; {
		i := strings.IndexByte(src[off:], '\n')
		end := off + i
		if i < 0 {
			end = len(src)
		}
		starts = append(starts, off)
		lines = append(lines, strings.TrimSuffix(src[off:end], "\r"))
		if i < 0 {
			return lines, starts
		}
		off = end + 1
	}
}

var languages = map[string]string{
	".go": "go", ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript", ".rs": "rust", ".java": "java",
	".kt": "kotlin", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp",
	".rb": "ruby", ".php": "php", ".swift": "swift", ".scala": "scala", ".sh": "shell", ".bash": "shell",
	".zsh": "shell", ".lua": "lua", ".md": "markdown", ".markdown": "markdown", ".rst": "rst",
	".txt": "text", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml",
	".html": "html", ".css": "css", ".sql": "sql", ".proto": "protobuf", ".s": "asm", ".el": "elisp",
	".vim": "vim", ".mod": "gomod", ".tmpl": "template",
}

func languageOf(rel string) string {
	if l, ok := languages[strings.ToLower(path.Ext(rel))]; ok {
		return l
	}
	switch path.Base(rel) {
	case "Makefile", "makefile", "GNUmakefile":
		return "make"
	case "Dockerfile":
		return "dockerfile"
	}
	return "text"
}
