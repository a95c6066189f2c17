// Command mkset builds a commit set for the search benchmark from a git
// repository with its history: each query is the subject of a commit made
// after a release, its answer the non-test .go files and the functions that
// commit changed, located in the release. It follows the method of the
// shared tuning set (docs/index.md, "Retrieval benchmark"); the corpus is
// the module as the Go module proxy serves it at that release.
//
//	go run ./rag/testdata/mkset -git REPO.git -name tools -module golang.org/x/tools \
//	    -version v0.38.0 -tag v0.38.0 -until HEAD -max 100 -seed 1 > tools.jsonl
//
// -prefix names the module's directory in the repository when it is not
// the root (gopls/); nested modules are left out of the corpus, as the
// proxy's zip leaves them out.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

type fn struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

type record struct {
	ID      string   `json:"id"`
	Query   string   `json:"query"`
	Module  string   `json:"module"`
	Version string   `json:"version"`
	Files   []string `json:"files"`
	Funcs   []fn     `json:"funcs"`
	NoLeak  bool     `json:"noleak"`
	Commit  string   `json:"commit"`
	Date    string   `json:"date"`
}

var gitDir string

// errGit stops the commit being considered: an object the copy lacks.
type errGit struct{ err error }

func git(args ...string) []byte {
	cmd := exec.Command("git", append([]string{"--git-dir", gitDir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		panic(errGit{fmt.Errorf("git %v: %w", args, err)})
	}
	return out
}

func main() {
	flag.StringVar(&gitDir, "git", "", "git directory")
	name := flag.String("name", "", "set name (ids are NAME-NNN)")
	module := flag.String("module", "", "module path of the corpus")
	version := flag.String("version", "", "module version of the corpus")
	tag := flag.String("tag", "", "git tag of that version")
	until := flag.String("until", "HEAD", "last commit considered")
	prefix := flag.String("prefix", "", "the module's directory in the repository, with a trailing slash")
	max := flag.Int("max", 100, "queries at most (a seeded sample)")
	seed := flag.Uint64("seed", 1, "sample seed")
	flag.Parse()

	corpus := corpusFiles(*tag, *prefix)
	revs := strings.Fields(string(git("rev-list", "--no-merges", "--reverse", *tag+".."+*until)))
	counts := map[string]int{}
	var recs []record
	for _, rev := range revs {
		r, why := consider(rev, *tag, *prefix, corpus)
		counts[why]++
		if why != "ok" {
			continue
		}
		r.Module, r.Version = *module, *version
		recs = append(recs, r)
	}
	fmt.Fprintf(os.Stderr, "%s: %d commits after %s: %v\n", *name, len(revs), *tag, counts)
	if len(recs) > *max {
		rng := rand.New(rand.NewPCG(*seed, 0))
		keep := rng.Perm(len(recs))[:*max]
		slices.Sort(keep)
		var s []record
		for _, i := range keep {
			s = append(s, recs[i])
		}
		recs = s
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	for i := range recs {
		recs[i].ID = fmt.Sprintf("%s-%03d", *name, i+1)
		enc.Encode(&recs[i])
	}
}

// corpusFiles lists the module's files at tag, relative to the module root,
// without nested modules' trees.
func corpusFiles(tag, prefix string) map[string]bool {
	all := strings.Split(strings.TrimSpace(string(git("ls-tree", "-r", "--name-only", tag))), "\n")
	var nested []string
	for _, f := range all {
		if strings.HasPrefix(f, prefix) && path.Base(f) == "go.mod" && f != prefix+"go.mod" {
			nested = append(nested, path.Dir(f)+"/")
		}
	}
	out := map[string]bool{}
outer:
	for _, f := range all {
		if !strings.HasPrefix(f, prefix) {
			continue
		}
		for _, n := range nested {
			if strings.HasPrefix(f, n) {
				continue outer
			}
		}
		out[strings.TrimPrefix(f, prefix)] = true
	}
	return out
}

var (
	prefixRE   = regexp.MustCompile(`^([\w./{},*-]+|\w+(\([^)]*\))?!?):\s+`)
	tagRE      = regexp.MustCompile(`\[[^\]]*\]`)
	issueRE    = regexp.MustCompile(`\(?#\d+\)?|\b(fixes|closes|updates|for)\s+(#|[\w/-]+#)\d+`)
	versionRE  = regexp.MustCompile(`\bv?\d+\.\d+(\.\d+)?\b`)
	rejectRE   = regexp.MustCompile(`(?i)\b(merge|revert|bump|bumps|bumped|release|releases|changelog|typos?|lint|linter|gofmt|gofumpt|formatting|format code|go\.mod|go\.sum|dependabot|deps|dependency|dependencies|vendor|cherry-pick|backport)\b`)
	otherLangs = setOf(".c", ".h", ".cc", ".cpp", ".s", ".py", ".js", ".ts", ".tsx", ".jsx", ".rs", ".java", ".rb", ".sh", ".proto", ".swift", ".m", ".kt", ".cs", ".php", ".lua")
)

func setOf(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// clean removes a leading package or scope prefix, [tags] and issue
// references from a commit subject.
func clean(s string) string {
	s = strings.TrimSpace(s)
	for range 2 {
		if m := prefixRE.FindStringIndex(s); m != nil {
			s = s[m[1]:]
		}
	}
	s = tagRE.ReplaceAllString(s, "")
	s = issueRE.ReplaceAllString(s, "")
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimRight(s, " .:;,")
}

func consider(rev, tag, prefix string, corpus map[string]bool) (r record, why string) {
	defer func() {
		if e, ok := recover().(errGit); ok {
			fmt.Fprintln(os.Stderr, e.err)
			r, why = record{}, "unreadable"
		}
	}()
	info := strings.SplitN(strings.TrimSpace(string(git("show", "-s", "--format=%s%n%cs%n%P", rev))), "\n", 3)
	if len(info) < 3 || strings.Contains(info[2], " ") {
		return record{}, "merge"
	}
	subject, date, parent := info[0], info[1], info[2]
	q := clean(subject)
	switch {
	case len(strings.Fields(q)) < 4:
		return record{}, "short subject"
	case rejectRE.MatchString(subject) || versionRE.MatchString(q):
		return record{}, "kind of commit"
	}
	var targets []string
	for _, line := range strings.Split(strings.TrimSpace(string(git("diff-tree", "--no-renames", "-r", "--name-status", parent, rev))), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		st, p := f[0], f[1]
		ext := path.Ext(p)
		if otherLangs[ext] {
			return record{}, "other language"
		}
		if ext != ".go" || strings.HasSuffix(p, "_test.go") || isTestPath(p) {
			continue
		}
		if st != "M" {
			return record{}, "adds or deletes a .go file"
		}
		if generated(git("show", parent+":"+p)) {
			continue
		}
		if !strings.HasPrefix(p, prefix) || !corpus[strings.TrimPrefix(p, prefix)] {
			return record{}, "outside the corpus"
		}
		targets = append(targets, p)
	}
	if len(targets) == 0 || len(targets) > 3 {
		return record{}, "not 1-3 non-test .go files"
	}
	r = record{Query: q, Commit: rev, Date: date}
	for _, p := range targets {
		rel := strings.TrimPrefix(p, prefix)
		r.Files = append(r.Files, rel)
		r.Funcs = append(r.Funcs, changedFuncs(parent, rev, tag, p, rel)...)
	}
	if r.Funcs == nil {
		r.Funcs = []fn{}
	}
	r.NoLeak = !leaks(q, r.Funcs)
	return r, "ok"
}

func isTestPath(p string) bool {
	for _, d := range strings.Split(path.Dir(p), "/") {
		if d == "testdata" || d == "internal/testenv" {
			return true
		}
	}
	return false
}

func generated(src []byte) bool {
	head := src[:min(len(src), 4096)]
	for _, l := range bytes.Split(head, []byte("\n")) {
		t := string(bytes.TrimSpace(l))
		if strings.HasPrefix(t, "// Code generated ") && strings.Contains(t, "DO NOT EDIT") {
			return true
		}
	}
	return false
}

// changedFuncs maps the diff's hunks onto the top-level functions of the
// parent's file, then finds each by name in the release's file.
func changedFuncs(parent, rev, tag, p, rel string) []fn {
	old := git("show", parent+":"+p)
	oldFuncs := funcs(old)
	if oldFuncs == nil {
		return nil
	}
	diff := git("diff", "-U0", "--no-ext-diff", parent, rev, "--", p)
	touched := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(diff))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "@@ -") {
			continue
		}
		spec := strings.Fields(line)[1][1:]
		start, count := spec, "1"
		if i := strings.IndexByte(spec, ','); i >= 0 {
			start, count = spec[:i], spec[i+1:]
		}
		s, _ := strconv.Atoi(start)
		c, _ := strconv.Atoi(count)
		lo, hi := s, s+c-1
		if c == 0 { // an insertion after line s
			lo, hi = s, s
		}
		for _, f := range oldFuncs {
			if c == 0 && f.Start <= lo && lo < f.End || c > 0 && f.Start <= hi && lo <= f.End {
				touched[f.Name] = true
			}
		}
	}
	if len(touched) == 0 {
		return nil
	}
	var out []fn
	for _, f := range funcs(git("show", tag+":"+p)) {
		if touched[f.Name] {
			f.Path = rel
			out = append(out, f)
		}
	}
	return out
}

func funcs(src []byte) []fn {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "x.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []fn
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			name = recvName(fd.Recv.List[0].Type) + "." + name
		}
		out = append(out, fn{Name: name, Start: fset.Position(fd.Type.Func).Line, End: fset.Position(fd.Body.Rbrace).Line})
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}

// leaks reports whether the query names a target function or its receiver
// type as a whole word: an identifier of several parts in any case, a
// one-word one only as written.
func leaks(q string, fs []fn) bool {
	words := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(q, -1)
	for _, f := range fs {
		for _, id := range strings.Split(f.Name, ".") {
			multi := strings.Contains(id, "_") || len(id) > 1 && strings.IndexFunc(id[1:], func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0
			for _, w := range words {
				if w == id || multi && strings.EqualFold(w, id) {
					return true
				}
			}
		}
	}
	return false
}
