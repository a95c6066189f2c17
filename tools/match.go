package tools

import (
	"fmt"
	"strings"
	"unicode"
)

// Match levels, strict to loose. No edit-distance fuzz: a loose match that
// is not unique is an error, and the model is told which level matched.
const (
	levelExact    = "exact"
	levelTrailing = "ignoring trailing whitespace"
	levelIndent   = "ignoring indentation"
	levelUnicode  = "normalising unicode punctuation and spaces"
)

// lineLevels are the whitespace-tolerant levels, tried after exact.
var lineLevels = []struct {
	name string
	norm func(string) string
}{
	{levelTrailing, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }},
	{levelIndent, strings.TrimSpace},
	{levelUnicode, func(s string) string { return strings.TrimSpace(normUnicode(s)) }},
}

// normUnicode maps typographic punctuation and odd spaces to ASCII, as
// models often "prettify" quotes and dashes.
func normUnicode(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '‘', '’', '‚', '‛', '′':
			return '\''
		case '“', '”', '„', '‟', '″':
			return '"'
		case '‐', '‑', '‒', '–', '—', '―', '−':
			return '-'
		case '\u00a0', '\u2002', '\u2003', '\u2009', '\u202f', '\u3000':
			return ' '
		case '\u200b', '\ufeff':
			return -1
		}
		return r
	}, s)
}

// editResult is a successful replacement.
type editResult struct {
	Content string
	Level   string
	Count   int
	Lines   []int // 1-based first lines of the replaced spans
}

// replaceText replaces old with new in content, strict level first. An
// ambiguous or missing match is returned as a message for the model.
func replaceText(content, old, new string, all bool) (editResult, string) {
	if n := strings.Count(content, old); n > 0 {
		lines := occurrenceLines(content, old)
		if n > 1 && !all {
			return editResult{}, ambiguous(levelExact, lines)
		}
		if !all {
			return editResult{Content: strings.Replace(content, old, new, 1), Level: levelExact, Count: 1, Lines: lines[:1]}, ""
		}
		return editResult{Content: strings.ReplaceAll(content, old, new), Level: levelExact, Count: n, Lines: lines}, ""
	}
	lines := strings.Split(content, "\n")
	oldLines := splitBlock(old)
	for _, lv := range lineLevels {
		starts := findLines(lines, oldLines, lv.norm)
		if len(starts) == 0 {
			continue
		}
		if len(starts) > 1 && !all {
			return editResult{}, ambiguous(lv.name, plusOne(starts))
		}
		out := replaceLines(lines, oldLines, splitBlock(new), starts)
		return editResult{Content: strings.Join(out, "\n"), Level: lv.name, Count: len(starts), Lines: plusOne(starts)}, ""
	}
	return editResult{}, noMatch(lines, oldLines, "old_string was not found in the file")
}

// splitBlock splits a block into lines, ignoring one trailing newline, since
// line-level matches replace whole lines.
func splitBlock(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// maxFuzzyWork bounds the line comparisons of one fuzzy search.
const maxFuzzyWork = 20_000_000

// findLines returns the 0-based starts of non-overlapping windows whose
// normalised lines equal the normalised needle.
func findLines(lines, needle []string, norm func(string) string) []int {
	if len(needle) == 0 || len(needle) > len(lines) {
		return nil
	}
	want := make([]string, len(needle))
	for i, l := range needle {
		want[i] = norm(l)
	}
	if strings.Join(want, "") == "" {
		return nil // a blank needle matches everywhere: useless
	}
	if len(lines)*len(needle) > maxFuzzyWork {
		// A window at every line, compared line by line: 40 000 lines
		// of "x" and a needle of 20 000 took 17 s of a core. The exact
		// match (strings.Count) has run already; past this, the model is
		// told to copy the text exactly.
		return nil
	}
	have := make([]string, len(lines))
	for i, l := range lines {
		have[i] = norm(l)
	}
	var starts []int
	for i := 0; i+len(needle) <= len(lines); i++ {
		ok := true
		for k := range needle {
			if have[i+k] != want[k] {
				ok = false
				break
			}
		}
		if ok {
			starts = append(starts, i)
			i += len(needle) - 1
		}
	}
	return starts
}

// replaceLines swaps each matched window for repl, re-indented to the
// file's indentation (reindentBlock).
func replaceLines(lines, oldLines, repl []string, starts []int) []string {
	var out []string
	prev := 0
	for _, s := range starts {
		out = append(out, lines[prev:s]...)
		out = append(out, reindentBlock(repl, oldLines, lines[s:s+len(oldLines)], lines)...)
		prev = s + len(oldLines)
	}
	return append(out, lines[prev:]...)
}

func occurrenceLines(content, old string) []int {
	var lines []int
	off := 0
	for {
		i := strings.Index(content[off:], old)
		if i < 0 {
			return lines
		}
		lines = append(lines, 1+strings.Count(content[:off+i], "\n"))
		off += i + max(len(old), 1)
	}
}

func plusOne(xs []int) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x + 1
	}
	return out
}

func ambiguous(level string, lines []int) string {
	strs := make([]string, len(lines))
	for i, l := range lines {
		strs[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("old_string matches %d places (%s), starting at lines %s; add surrounding lines to make it unique, or set replace_all",
		len(lines), level, strings.Join(strs, ", "))
}

// noMatch describes the window of the file most like the needle, so the
// model can copy the real text instead of guessing again.
// what says what was not found ("old_string was not found in the file").
func noMatch(lines, needle []string, what string) string {
	start, score := closest(lines, needle)
	if start < 0 || score < 0.5 {
		return what + ", and no similar lines were found; read the file again and copy the text exactly"
	}
	end := min(start+len(needle), len(lines))
	return fmt.Sprintf("%s, not even ignoring indentation, trailing spaces and typographic quotes. The most similar lines are %d-%d:\n%s"+
		"Copy the text from these lines exactly as they are (without the line numbers) and try again.",
		what, start+1, end, numbered(lines[start:end], start+1))
}

// closest scores every window of len(needle) lines by the mean per-line
// bigram similarity and returns the best start.
func closest(lines, needle []string) (int, float64) {
	n := len(needle)
	if n == 0 || len(lines) == 0 {
		return -1, 0
	}
	if n > len(lines) {
		n = len(lines)
	}
	if len(lines)*n > 4_000_000 {
		return -1, 0 // too big to scan; the model is told to read again
	}
	want := make([]map[string]int, n)
	for i := range n {
		want[i] = bigrams(needle[i])
	}
	have := make([]map[string]int, len(lines))
	for i, l := range lines {
		have[i] = bigrams(l)
	}
	best, bestScore := -1, -1.0
	for s := 0; s+n <= len(lines); s++ {
		total := 0.0
		for k := range n {
			total += dice(want[k], have[s+k])
		}
		if sc := total / float64(n); sc > bestScore {
			best, bestScore = s, sc
		}
	}
	return best, bestScore
}

func bigrams(s string) map[string]int {
	r := []rune(strings.TrimSpace(s))
	m := map[string]int{}
	if len(r) == 1 {
		m[string(r)]++
	}
	for i := 0; i+1 < len(r); i++ {
		m[string(r[i:i+2])]++
	}
	return m
}

func dice(a, b map[string]int) float64 {
	na, nb := 0, 0
	for _, v := range a {
		na += v
	}
	for _, v := range b {
		nb += v
	}
	if na+nb == 0 {
		return 1
	}
	common := 0
	for k, v := range a {
		common += min(v, b[k])
	}
	return 2 * float64(common) / float64(na+nb)
}
