package rag

import (
	"path"
	"strings"
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
)

func (k fileKind) String() string {
	switch k {
	case kindTest:
		return "test"
	case kindDocs:
		return "docs"
	case kindGenerated:
		return "generated"
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
