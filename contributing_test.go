package agentd_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestContributingLists holds docs/contributing.md to the tree: each kind of
// change whose heading counts its files ("## A tool (4 files)") lists that
// many, every path the lists name exists (a <name> stands for any), and
// the clients' hand-written protocol modules mirror nothing the contract
// generates, so that a wire field is one Go file and a regeneration.
func TestContributingLists(t *testing.T) {
	data, err := os.ReadFile("docs/contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`^## (.*) \((\d+) files?\b`)
	item := regexp.MustCompile(`^(\d+)\. `)
	path := regexp.MustCompile("`([A-Za-z0-9_.<>*-]+(?:/[A-Za-z0-9_.<>*-]+)+/?|README\\.md)`")
	counted := 0
	sections := strings.Split("\n"+string(data), "\n## ")
	for _, sec := range sections[1:] {
		lines := strings.Split("## "+sec, "\n")
		m := heading.FindStringSubmatch(lines[0])
		if m == nil {
			continue
		}
		counted++
		want, _ := strconv.Atoi(m[2])
		items := 0
		for _, l := range lines[1:] {
			if im := item.FindStringSubmatch(l); im != nil {
				items++
			}
		}
		if items > 0 && items != want {
			t.Errorf("%q says %d files and lists %d", m[1], want, items)
		}
		for _, pm := range path.FindAllStringSubmatch(sec, -1) {
			p := strings.TrimSuffix(pm[1], "/")
			if strings.ContainsAny(p, "<*") {
				glob := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(p, "*")
				if found, _ := filepath.Glob(glob); len(found) == 0 {
					t.Errorf("%q names %s, which matches nothing", m[1], pm[1])
				}
				continue
			}
			if _, err := os.Stat(p); err != nil && !isMethod(p) {
				t.Errorf("%q names %s: %v", m[1], pm[1], err)
			}
		}
	}
	if counted < 5 {
		t.Errorf("only %d sections count their files; docs/contributing.md lost its headings", counted)
	}
}

// isMethod: agent/reply is a method, not a path.
func isMethod(p string) bool {
	for _, prefix := range []string{"agent/", "index/", "mcp/", "rules/", "editor/", "textDocument/", "window/"} {
		if strings.HasPrefix(p, prefix) && !strings.Contains(p, ".") {
			return true
		}
	}
	return false
}

// The clients' protocol modules re-export the generated contract: a type,
// a list of words or a method table of their own would be a mirror to keep
// by hand.
func TestClientsMirrorNoContract(t *testing.T) {
	for _, c := range []struct {
		file   string
		mirror *regexp.Regexp
	}{
		// an interface, or a constant list of strings ('a', 'b')
		{"editor-clients/vscode/src/protocol.ts", regexp.MustCompile(`(?m)^export (interface \w+|const \w+ = \[\s*'|const \w+ = \{\s*\w+: ')`)},
		// a list of strings, or a method table ('agent/…')
		{"editor-clients/nvim/lua/agentd/protocol.lua", regexp.MustCompile(`\{\s*'[^']*'\s*,|= '[a-zA-Z$]+/[A-Za-z/]+'`)},
	} {
		data, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if m := c.mirror.Find(data); m != nil {
			t.Errorf("%s declares %q by hand: it belongs in the generated contract (go test ./rpc -run TestContract -update)", c.file, m)
		}
	}
}
