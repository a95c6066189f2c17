// Package agentd_test holds the statement of policy on imports: which
// package of this module may import which, and which package alone owns
// each third-party library. It is policy, not a description: do not change
// it to make a build pass; change the code, or argue the policy in review.
package agentd_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/agentd/agentd"

// allowed lists, for each package, the packages of this module it may
// import. Imports flow one way: cmd → rpc → agent → tools/policy → tools →
// rag. Each package owns its words: the run vocabulary is agent's, the
// tools' nouns, modes and decisions are tools', the policy's verdicts and
// rules are tools/policy's (which judges tools' calls, so it sits above
// tools and only the agent asks it), the index's hits are rag's; rpc/wire
// is the native protocol alone (methods, codes, initialize, the index's
// params and answers as the wire carries them: its own types, which rpc
// fills from rag's, so a change in rag never changes the wire) and is part
// of rpc, so no lower layer imports it. rpc and rpc/acp name rag's hits
// where they hand the index to search_semantic.
var allowed = map[string][]string{
	"rpc/wire":          {},
	"rag":               {},
	"rag/pgstore":       {"rag"},
	"tools":             {"rag", "tools/sandbox", "tools/images", "internal/lazy"},
	"tools/images":      {},
	"tools/sandbox":     {},
	"tools/policy":      {"tools", "internal/lazy"},
	"tools/mcp":         {"tools", "rag", "internal/lazy"},
	"tools/mcp/mcptest": {"internal/testcache"},
	"tools/lsp":         {"tools"},
	"tools/lsp/lsptest": {"internal/testcache"},
	"agent":             {"tools", "tools/policy", "tools/mcp", "tools/lsp", "tools/images", "rag", "internal/lazy"},
	"agent/modeltest":   {},
	"rpc":               {"rpc/wire", "agent", "tools", "tools/mcp", "rag"},
	"rpc/acp":           {"rpc/wire", "agent", "tools", "tools/mcp", "rag"},
	"rpc/rpctest":       {"rpc/wire", "rpc", "agent", "agent/modeltest", "tools", "internal/await"},
	"rpc/term":          {"agent", "tools", "rpc/term/termmd"},
	"rpc/term/termmd":   {},
	"cmd/agentd":        {"rpc/wire", "rpc", "rpc/acp", "rpc/term", "agent", "tools", "tools/mcp", "tools/sandbox", "rag", "rag/pgstore"},
	"cmd/fakemodel":     {"agent/modeltest"},
	"cmd/bridgemodel":   {},
	// Values built on first use (agent's and the tools' regexps).
	"internal/lazy": {},
	// Test helpers (imported by _test.go files only, which the policy
	// does not read); contract is the contract test's generator.
	"internal/proctest":  {"internal/await"},
	"internal/await":     {},
	"internal/testcache": {},
	"internal/pgtest":    {},
	"internal/contract":  {},
}

// tools/checkpoint (undo's store and checkpoints) sits under tools and
// beside it for the agent; it reads the repository's ignore rules from rag.
func init() {
	allowed["tools/checkpoint"] = []string{"rag"}
	allowed["tools"] = append(allowed["tools"], "tools/checkpoint")
	allowed["agent"] = append(allowed["agent"], "tools/checkpoint")
}

// owners names the one package that may import each third-party module.
var owners = map[string]string{
	"go.lsp.dev/jsonrpc2": "rpc",
	// The LSP client of agentd's own language servers; rpc speaks the
	// editor's LSP-shaped protocol with its own types (rpc/wire), and
	// tools/lsp frames its JSON-RPC itself rather than through jsonrpc2
	// (a server child may hang or flood: every call bounded, no write
	// blocking a caller), so each library has one owner.
	"go.lsp.dev/protocol":                    "tools/lsp",
	"github.com/sashabaranov/go-openai":      "", // tests only: modeltest's checks against an independent client
	"github.com/philippgille/chromem-go":     "rag",
	"github.com/fsnotify/fsnotify":           "rag",
	"github.com/go-git/go-git/v5":            "rag",
	"mvdan.cc/sh/v3":                         "tools/policy",
	"github.com/creack/pty":                  "tools",
	"github.com/aymanbagabas/go-udiff":       "tools",
	"github.com/coder/acp-go-sdk":            "rpc/acp",
	"github.com/modelcontextprotocol/go-sdk": "tools/mcp",
	"golang.org/x/term":                      "rpc/term",
	"golang.org/x/sys":                       "rag",
	"golang.org/x/image":                     "tools/images",
	// web_fetch: HTML into Markdown, and the page's character set.
	"github.com/JohannesKaufmann/html-to-markdown": "tools",
	"golang.org/x/net": "tools",
	// Reserved for the sandbox; not imported today (raw system calls, see
	// tools/sandbox/landlock_linux.go for why).
	"github.com/landlock-lsm/go-landlock": "tools/sandbox",
	"github.com/stretchr/testify":         "", // tests only

	// The team index (docs/index.md): PostgreSQL's client.
	"github.com/jackc/pgx/v5": "rag/pgstore",
}

func TestImportPolicy(t *testing.T) {
	imports := moduleImports(t)
	for pkg, deps := range imports {
		want, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in the import policy: add it to layers_test.go", pkg)
			continue
		}
		for _, dep := range deps {
			switch {
			case strings.HasPrefix(dep, module+"/"):
				if rel := strings.TrimPrefix(dep, module+"/"); !slices.Contains(want, rel) {
					t.Errorf("%s imports %s, which the policy does not allow", pkg, rel)
				}
			case isThirdParty(dep):
				owner, known := ownerOf(dep)
				if !known {
					t.Errorf("%s imports %s, a third-party module with no owner in the policy", pkg, dep)
				} else if owner != pkg {
					t.Errorf("%s imports %s, which only %q may import", pkg, dep, owner)
				}
			}
		}
	}
}

func isThirdParty(path string) bool {
	first := strings.SplitN(path, "/", 2)[0]
	return strings.Contains(first, ".")
}

func ownerOf(path string) (string, bool) {
	for mod, owner := range owners {
		if path == mod || strings.HasPrefix(path, mod+"/") {
			return owner, true
		}
	}
	return "", false
}

// moduleImports parses the non-test Go files of every package of the module.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "editor-clients") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !slices.Contains(out[pkg], p) {
				out[pkg] = append(out[pkg], p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
