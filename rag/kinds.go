package rag

import (
	"go/build/constraint"
	"path"
	"strings"
	"sync"
)

// fileKind is what a file is for, as far as a code question is concerned.
// A question about code wants code: tests, fixtures, prose and data files
// match its words as well (they name the same things) but are rarely the
// answer, unless the question asks for them.
type fileKind uint8

const (
	kindCode      fileKind = iota
	kindTest               // _test.go, test_*.py, *.spec.ts, or under test/, tests/, testdata/, …
	kindDocs               // prose, configuration and data: markdown, text, YAML, JSON, licences, changelogs
	kindGenerated          // carries a "Code generated … DO NOT EDIT." line
	kindExcluded           // Go built only under a tag the default build does not set
)

func (k fileKind) String() string {
	switch k {
	case kindTest:
		return "test"
	case kindDocs:
		return "docs"
	case kindGenerated:
		return "generated"
	case kindExcluded:
		return "excluded"
	}
	return ""
}

// proseLangs are the languages of files that are not code.
var proseLangs = setOf("markdown", "rst", "text", "json", "yaml", "toml", "xml", "gomod")

// kindOf classifies a file by its path alone; generated files are found by
// content (isGenerated).
func kindOf(rel string) fileKind {
	low := strings.ToLower(rel)
	base := path.Base(low)
	if isTestName(base) {
		return kindTest
	}
	dir := path.Dir(low)
	for dir != "." && dir != "/" && dir != "" {
		if isTestDir(path.Base(dir)) {
			return kindTest
		}
		dir = path.Dir(dir)
	}
	if _, ok := proseLangs[languageOf(rel)]; ok {
		return kindDocs
	}
	switch base {
	case "license", "licence", "copying", "notice", "authors", "contributors", "changelog", "changes", "news":
		return kindDocs
	}
	return kindCode
}

func isTestName(base string) bool {
	stem := strings.TrimSuffix(base, path.Ext(base))
	return strings.HasSuffix(stem, "_test") || strings.HasPrefix(stem, "test_") ||
		strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "test") && strings.HasSuffix(base, ".java")
}

// isTestDir matches test, tests, testdata, __tests__, fixtures, e2e and
// names ending in "test" or "tests" (integrationtest, caddytest).
func isTestDir(name string) bool {
	switch name {
	case "testdata", "__tests__", "fixtures", "e2e", "spec":
		return true
	}
	return strings.HasSuffix(name, "test") || strings.HasSuffix(name, "tests")
}

// generatedMarker is the line Go's convention puts in generated files
// (https://go.dev/s/generatedcode); other generators copy it.
const generatedMarker = "Code generated "

// isGenerated looks for "Code generated … DO NOT EDIT." on a comment line
// near the top of the file.
func isGenerated(src string) bool {
	head := src[:min(len(src), 4096)]
	for line := range strings.Lines(head) {
		t := strings.TrimSpace(line)
		t = strings.TrimLeft(t, "/#*-<!; ")
		if strings.HasPrefix(t, generatedMarker) && strings.Contains(t, "DO NOT EDIT") {
			return true
		}
	}
	return false
}

// queryIntent says which demoted kinds a query asks for by name.
type queryIntent struct{ tests, docs bool }

var testWords = setOf("test", "tests", "testing", "tested", "testcase", "testcases", "unittest", "spec", "specs", "fixture", "fixtures")
var docWords = setOf("doc", "docs", "documentation", "readme", "changelog", "markdown", "guide", "tutorial", "manual", "license")

func intentOf(query string) queryIntent {
	var in queryIntent
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) {
		if _, ok := testWords[w]; ok {
			in.tests = true
		}
		if _, ok := docWords[w]; ok {
			in.docs = true
		}
	}
	return in
}

// goKindOf refines a Go file's kind by its content: a file outside
// _test.go that imports "testing" is a test harness or helper (kindTest),
// and one whose build constraint no GOOS/GOARCH satisfies with the default
// tags (ignore, an experiment, a custom tag like integration) is built only
// on request (kindExcluded).
func goKindOf(src string) fileKind {
	head := src[:min(len(src), 16<<10)]
	pkg := -1
	for off := 0; off < len(head); {
		end := strings.IndexByte(head[off:], '\n')
		if end < 0 {
			end = len(head) - off
		}
		line := strings.TrimSpace(head[off : off+end])
		if strings.HasPrefix(line, "package ") {
			pkg = off
			break
		}
		if constraint.IsGoBuild(line) || constraint.IsPlusBuild(line) {
			if e, err := constraint.Parse(line); err == nil && !satisfiable(e) {
				return kindExcluded
			}
		}
		off += end + 1
	}
	if pkg >= 0 && importsTesting(head[pkg:]) {
		return kindTest
	}
	return kindCode
}

// importsTesting looks for "testing" among the imports after the package
// clause.
func importsTesting(src string) bool {
	for line := range strings.Lines(src) {
		t := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(t, "func ") || strings.HasPrefix(t, "type ") || strings.HasPrefix(t, "var ") || strings.HasPrefix(t, "const "):
			return false
		case t == `"testing"` || strings.HasSuffix(t, ` "testing"`) && !strings.Contains(t, "//"):
			return true
		}
	}
	return false
}

// platformSet is what a default build may target.
type platformSet struct {
	os, arch []string
	unix     map[string]struct{}
}

// platforms is built on first use, not at program start.
var platforms = sync.OnceValue(func() platformSet {
	return platformSet{
		os:   strings.Fields("aix android darwin dragonfly freebsd hurd illumos ios js linux netbsd openbsd plan9 solaris wasip1 windows zos"),
		arch: strings.Fields("386 amd64 arm arm64 loong64 mips mips64 mips64le mipsle ppc64 ppc64le riscv64 s390x sparc64 wasm"),
		unix: setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "linux", "netbsd", "openbsd", "solaris"),
	}
})

// satisfiable reports whether some GOOS/GOARCH, with or without cgo,
// builds under e with the default tags (every go1.N, gc).
func satisfiable(e constraint.Expr) bool {
	pl := platforms()
	for _, goos := range pl.os {
		for _, arch := range pl.arch {
			for _, cgo := range []bool{true, false} {
				ok := e.Eval(func(tag string) bool {
					_, unix := pl.unix[goos]
					return tag == goos || tag == arch || tag == "unix" && unix || tag == "cgo" && cgo || tag == "gc" ||
						strings.HasPrefix(tag, "go1.")
				})
				if ok {
					return true
				}
			}
		}
	}
	return false
}
