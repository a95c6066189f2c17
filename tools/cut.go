package tools

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
)

// Output the model cannot read whole is cut at line boundaries, never in
// the middle of a line, and the cut says which lines are missing and how to
// see them. A small model reads the note literally, so it names the lines
// and a command that would show them.

// cutOptions says how to shorten one output.
type cutOptions struct {
	maxBytes, maxLines int
	// failures keeps the lines of the omitted middle that look like
	// failures (FAIL, panic, error, file:line:), numbered, since a test
	// run's verdict is often neither at its start nor at its end.
	failures bool
	// more tells how to see the omitted lines [from, to) (0-based), given
	// the failure lines kept from them (failures set); it ends the note.
	more func(from, to int, kept []int) string
}

// failureLine matches a line that says something failed: a test verdict,
// a panic, an error. positionLine matches one that starts with a position
// (file.go:12: or file.go:12:5:): a compiler error or a test's message,
// but also any test's log line, so it counts only near a failure line, or
// when the omitted lines have none (a compiler's errors).
var (
	failureLine  = lazy.Regexp(`\bFAIL|\bpanic\b|[Ee]rror\b|\bERROR\b|\bERR!|Traceback|Exception\b`)
	positionLine = lazy.Regexp(`^\s*[\w./\\-]+\.\w+:\d+(:\d+)?:`)
)

// nearFailure is how many lines from a failure line a position line counts.
const nearFailure = 3

// cutLines keeps the head and the tail of s within the options' bounds,
// whole lines only, with a note naming the omitted line range in place of
// the middle. It reports whether anything was cut.
func cutLines(s string, o cutOptions) (string, bool) {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if len(l) > maxLineChars+1 {
			nl := strings.HasSuffix(l, "\n")
			lines[i] = truncateLine(strings.TrimSuffix(l, "\n"))
			if nl {
				lines[i] += "\n"
			}
		}
	}
	if n := sumLen(lines); n <= o.maxBytes && len(lines) <= o.maxLines {
		return strings.Join(lines, ""), n != len(s) // at most long lines were shortened
	}
	bytes, count := o.maxBytes, o.maxLines
	var kept []int // indexes of failure lines, chosen after head and tail
	all := 0
	if o.failures {
		bytes, count = bytes*3/4, count*3/4 // a quarter is for failures
	}
	// A third for the start (the command's first words), two thirds for
	// the end, where the summary and the verdict usually are.
	head := takeLines(lines, 0, 1, bytes/3, count/3)
	tail := takeLines(lines, len(lines)-1, -1, bytes-sumLen(lines[:head]), count-head)
	tail = min(tail, len(lines)-head)
	from, to := head, len(lines)-tail // the omitted lines: [from, to)
	if o.failures {
		kept, all = failuresIn(lines, from, to, o.maxBytes/4, o.maxLines/4)
	}
	var b strings.Builder
	for _, l := range lines[:from] {
		b.WriteString(l)
	}
	if from > 0 && !strings.HasSuffix(lines[from-1], "\n") {
		b.WriteString("\n")
	}
	b.WriteString(cutNote(lines, from, to, kept, all, o))
	for _, l := range lines[to:] {
		b.WriteString(l)
	}
	return b.String(), true
}

// takeLines counts how many lines, from start in direction step, fit in
// maxBytes and maxLines.
func takeLines(lines []string, start, step, maxBytes, maxLines int) int {
	n, size := 0, 0
	for i := start; i >= 0 && i < len(lines) && n < maxLines; i += step {
		if size+len(lines[i]) > maxBytes {
			break
		}
		size += len(lines[i])
		n++
	}
	return n
}

// failuresIn returns the indexes in [from, to) of the lines that look like
// failures (failureLines), at most maxLines of them within maxBytes, and
// how many there are in all.
func failuresIn(lines []string, from, to, maxBytes, maxLines int) ([]int, int) {
	all := failureLines(lines[from:to])
	var out []int
	size := 0
	for _, k := range all {
		i := from + k
		if len(out) == maxLines || size+len(lines[i])+8 > maxBytes {
			break
		}
		size += len(lines[i]) + 8
		out = append(out, i)
	}
	return out, len(all)
}

// failureLines returns the indexes of the lines that look like failures:
// failure lines, and position lines near one; position lines alone when
// there is no failure line.
func failureLines(lines []string) []int {
	var strong []int
	for i, l := range lines {
		if failureLine().MatchString(l) {
			strong = append(strong, i)
		}
	}
	var out []int
	k := 0 // strong[k] is the first failure line not before i-nearFailure
	for i, l := range lines {
		for k < len(strong) && strong[k] < i-nearFailure {
			k++
		}
		switch {
		case k < len(strong) && strong[k] == i:
			out = append(out, i)
		case !positionLine().MatchString(l):
		case len(strong) == 0, k < len(strong) && strong[k] <= i+nearFailure:
			out = append(out, i)
		}
	}
	return out
}

func cutNote(lines []string, from, to int, kept []int, all int, o cutOptions) string {
	omitted := sumLen(lines[from:to])
	span := fmt.Sprintf("lines %d-%d of %d", from+1, to, len(lines))
	if to-from == 1 {
		span = fmt.Sprintf("line %d of %d", from+1, len(lines))
	}
	var b strings.Builder
	if !o.failures {
		fmt.Fprintf(&b, "[… %s omitted (%s). %s]\n", span, sizeOf(omitted), o.more(from, to, kept))
		return b.String()
	}
	switch {
	case all == 0:
		fmt.Fprintf(&b, "[… %s omitted (%s); none of them looks like an error or a failure. %s]\n", span, sizeOf(omitted), o.more(from, to, kept))
		return b.String()
	case len(kept) == all:
		look := "look like errors or failures; here they are"
		if all == 1 {
			look = "looks like an error or a failure; here it is"
		}
		fmt.Fprintf(&b, "[… %s omitted (%s). %s in them %s, numbered by output line:]\n", span, sizeOf(omitted), countOf(all, "line", "lines"), look)
	default:
		fmt.Fprintf(&b, "[… %s omitted (%s). %d lines in them look like errors or failures; the first %d, numbered by output line (to list them all, run the command again with 2>&1 | grep -nE 'FAIL|panic|[Ee]rror' appended):]\n", span, sizeOf(omitted), all, len(kept))
	}
	for _, i := range kept {
		fmt.Fprintf(&b, "%6d\t%s", i+1, lines[i])
		if !strings.HasSuffix(lines[i], "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "[… end of the omitted lines. %s]\n", o.more(from, to, kept))
	return b.String()
}

// OutputLimitFor is how many bytes of one tool result the model reads, for
// a context window of window tokens (0: unknown): 16 KiB, less for a small
// window (an eighth of it, at four bytes a token), never under 4 KiB.
func OutputLimitFor(window int) int {
	if window <= 0 {
		return defaultOutputLimit
	}
	return max(minOutputLimit, min(defaultOutputLimit, window/2))
}

const (
	defaultOutputLimit = 16 << 10
	minOutputLimit     = 4 << 10
)

// outputLimit is the bytes of one result the model reads in this run.
func (env *Env) outputLimit() int {
	if env == nil || env.OutputLimit <= 0 {
		return defaultOutputLimit
	}
	return env.OutputLimit
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sizeOf says a byte count the way people read it.
func sizeOf(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func sumLen(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}

// Fit cuts s to about limit bytes at line boundaries, with a note naming
// the lines left out: the last guard for a result too long for the model.
func Fit(s string, limit int) (string, bool) {
	return cutLines(s, cutOptions{maxBytes: limit, maxLines: max(limit/16, 64),
		more: func(int, int, []int) string { return "The result was too long to show whole; ask for less at once." }})
}
