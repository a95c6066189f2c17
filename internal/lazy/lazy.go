// Package lazy holds package-level values built on first use instead of
// at program start: agentd starts for every editor that opens a
// workspace, and the editor waits for initialize, so a regexp that only a
// command's output, a policy rule or a file's name will ever meet is not
// compiled before it is needed.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp returns a function that compiles expr on its first call and
// returns the same *regexp.Regexp every time. A bad expr panics there, as
// regexp.MustCompile would at start; TestRegexpsCompile-style tests of each
// package catch it.
func Regexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
