package lsp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentd/agentd/internal/await"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/lsp/lsptest"
)

// The real servers, installed by lsptest, in the real sandbox.

// workspace writes files into a new workspace and returns its root.
func workspace(t testing.TB, files map[string]string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root
}

// newManager runs the installed servers for root.
func newManager(t *testing.T, root string, settings Settings) *Manager {
	t.Helper()
	servers := lsptest.Install(t)
	t.Setenv("PATH", servers.PATH(os.Getenv("PATH")))
	// The servers' own caches: gopls's and tsserver's are safe for
	// several processes at once.
	m := New(Config{Root: root, Settings: settings, CacheDir: filepath.Join(filepath.Dir(servers.GoBin), "lsp-caches")})
	t.Cleanup(m.Close)
	return m
}

// wait is how long a test lets a server answer on an idle machine (a cold
// server loads the workspace first); await scales it to the load.
const wait = 30 * time.Second

func edit(t *testing.T, root, name, old, new string) {
	t.Helper()
	p := filepath.Join(root, name)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

// diagnose asks for fresh diagnostics until the file's are known.
func diagnose(t *testing.T, m *Manager, file string) tools.FileDiagnostics {
	t.Helper()
	got, err := m.Diagnostics(await.Context(t, wait), []string{file}, true)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.NoError(t, got[0].Err)
	require.False(t, got[0].Pending, "no diagnostics within %s", await.Timeout(wait))
	return got[0]
}

func messages(fd tools.FileDiagnostics) string {
	var b strings.Builder
	for _, d := range fd.Diagnostics {
		b.WriteString(d.Severity.String() + ": " + d.Message + "\n")
	}
	return b.String()
}

var goFiles = map[string]string{
	"go.mod":  "module shop\n\ngo 1.22\n",
	"cart.go": "package shop\n\n// Total sums the cart.\nfunc Total(items []int) int {\n\tsum := 0\n\tfor _, it := range items {\n\t\tsum += it\n\t}\n\treturn sum\n}\n",
	"main.go": "package shop\n\nfunc Checkout(items []int) int {\n\treturn Total(items) * 2\n}\n",
}

func TestGopls(t *testing.T) {
	root := workspace(t, goFiles)
	m := newManager(t, root, Settings{Auto: true})
	assert.True(t, m.Navigates())
	main, cart := filepath.Join(root, "main.go"), filepath.Join(root, "cart.go")
	m.Warm([]string{main})
	clean := diagnose(t, m, main)
	assert.Empty(t, clean.Diagnostics, messages(clean))
	assert.Equal(t, "gopls", clean.Server)

	ctx := await.Context(t, wait)
	defs, err := m.Definition(ctx, tools.TextPosition{Path: main, Line: 3, Character: 8})
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, cart, defs[0].Path)
	assert.Equal(t, 3, defs[0].Range.Start.Line)
	assert.Equal(t, 5, defs[0].Range.Start.Character)

	refs, err := m.References(ctx, tools.TextPosition{Path: cart, Line: 3, Character: 5}, false)
	require.NoError(t, err)
	require.Len(t, refs, 1)
	assert.Equal(t, main, refs[0].Path)
	assert.Equal(t, 3, refs[0].Range.Start.Line)

	hover, err := m.Hover(ctx, tools.TextPosition{Path: main, Line: 3, Character: 8})
	require.NoError(t, err)
	assert.Contains(t, hover, "func Total(items []int) int")

	syms, err := m.WorkspaceSymbols(ctx, "Total")
	require.NoError(t, err)
	require.NotEmpty(t, syms)
	assert.Equal(t, "Total", syms[0].Name)

	edit(t, root, "main.go", "return Total(items)", "return Totl(items)")
	broken := diagnose(t, m, main)
	assert.Contains(t, messages(broken), "error: undefined: Totl")
}

var tsFiles = map[string]string{
	"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}`,
	"cart.ts":       "export function total(items: number[]): number {\n  return items.reduce((a, b) => a + b, 0);\n}\n",
	"main.ts":       "import { total } from \"./cart\";\n\nexport const due: number = total([1, 2]) * 2;\n",
}

func TestTypeScript(t *testing.T) {
	root := workspace(t, tsFiles)
	m := newManager(t, root, Settings{Auto: true})
	main, cart := filepath.Join(root, "main.ts"), filepath.Join(root, "cart.ts")
	clean := diagnose(t, m, main)
	assert.Empty(t, clean.Diagnostics, messages(clean))
	assert.Equal(t, "typescript-language-server", clean.Server)

	ctx := await.Context(t, wait)
	defs, err := m.Definition(ctx, tools.TextPosition{Path: main, Line: 2, Character: 27})
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, cart, defs[0].Path)
	assert.Equal(t, 0, defs[0].Range.Start.Line)
	assert.Equal(t, 16, defs[0].Range.Start.Character)

	refs, err := m.References(ctx, tools.TextPosition{Path: cart, Line: 0, Character: 16}, false)
	require.NoError(t, err)
	var inMain []int
	for _, r := range refs {
		if r.Path == main {
			inMain = append(inMain, r.Range.Start.Line)
		}
	}
	assert.Equal(t, []int{0, 2}, inMain, "the import and the call")

	edit(t, root, "main.ts", "export const due: number", "export const due: string")
	broken := diagnose(t, m, main)
	assert.Contains(t, messages(broken), "error: Type 'number' is not assignable to type 'string'.")
}

func TestPyright(t *testing.T) {
	root := workspace(t, map[string]string{
		"cart.py": "def total(items: list[int]) -> int:\n    return sum(items)\n",
		"main.py": "from cart import total\n\ndue: int = total([1, 2]) * 2\n",
	})
	m := newManager(t, root, Settings{Auto: true})
	main := filepath.Join(root, "main.py")
	clean := diagnose(t, m, main)
	assert.Empty(t, clean.Diagnostics, messages(clean))
	edit(t, root, "main.py", "due: int", "due: str")
	broken := diagnose(t, m, main)
	assert.Contains(t, messages(broken), "error: Type \"int\" is not assignable to declared type \"str\"")
}

// TestClangd runs the system's clangd (Debian's), when installed.
func TestClangd(t *testing.T) {
	if _, err := exec.LookPath("clangd"); err != nil {
		t.Skip("clangd is not installed")
	}
	root := workspace(t, map[string]string{
		"cart.h": "int total(const int *items, int n);\n",
		"cart.c": "#include \"cart.h\"\n\nint total(const int *items, int n) {\n  int sum = 0;\n  for (int i = 0; i < n; i++) sum += items[i];\n  return sum;\n}\n",
		"main.c": "#include \"cart.h\"\n\nint due(void) {\n  int items[] = {1, 2};\n  return total(items, 2) * 2;\n}\n",
	})
	m := New(Config{Root: root, Settings: Settings{Auto: true}, CacheDir: t.TempDir()})
	t.Cleanup(m.Close)
	main := filepath.Join(root, "main.c")
	clean := diagnose(t, m, main)
	assert.Empty(t, clean.Diagnostics, messages(clean))
	ctx := await.Context(t, wait)
	defs, err := m.Definition(ctx, tools.TextPosition{Path: main, Line: 4, Character: 9})
	require.NoError(t, err)
	require.NotEmpty(t, defs)
	assert.Contains(t, []string{filepath.Join(root, "cart.h"), filepath.Join(root, "cart.c")}, defs[0].Path)
	edit(t, root, "main.c", "return total(items, 2)", "return totl(items, 2)")
	broken := diagnose(t, m, main)
	assert.Contains(t, messages(broken), "totl")
}

// TestRelatedFiles: a rename in one file breaks its caller in another the
// model read but did not change; the caller's new error comes back with
// the changed file's diagnostics.
func TestRelatedFiles(t *testing.T) {
	for _, c := range []struct {
		lang               string
		files              map[string]string
		changed, caller    string
		old, new, wantText string
	}{
		{"go", goFiles, "cart.go", "main.go", "func Total(", "func Sum(", "undefined: Total"},
		{"typescript", tsFiles, "cart.ts", "main.ts", "export function total(", "export function sum(", "has no exported member 'total'"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			root := workspace(t, c.files)
			m := newManager(t, root, Settings{Auto: true})
			changed, caller := filepath.Join(root, c.changed), filepath.Join(root, c.caller)
			diagnose(t, m, caller) // read: known clean
			diagnose(t, m, changed)
			edit(t, root, c.changed, c.old, c.new)
			got, err := m.Diagnostics(await.Context(t, wait), []string{changed}, true)
			require.NoError(t, err)
			require.NotEmpty(t, got)
			assert.Equal(t, changed, got[0].Path)
			var rel *tools.FileDiagnostics
			for i := range got[1:] {
				if got[1+i].Path == caller {
					rel = &got[1+i]
				}
			}
			require.NotNil(t, rel, "the caller's new error: %+v", got)
			assert.True(t, rel.Related)
			assert.Empty(t, rel.Before)
			assert.Contains(t, messages(*rel), c.wantText)
		})
	}
}
