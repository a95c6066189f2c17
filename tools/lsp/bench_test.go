package lsp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/tools/lsp/lsptest"
)

// BenchmarkDiagnostics measures, per language, how long the diagnostics of
// a file take after an edit on a 10,000-line project, with the server warm
// (it has loaded the project and checked the file once): each iteration
// breaks or mends one file on disk and asks for its fresh diagnostics, as
// a reply's last edit does. The target is at most 1 s.
//
//	go test ./tools/lsp -run '^$' -bench Diagnostics -benchtime 20x
func BenchmarkDiagnostics(b *testing.B) {
	servers := lsptest.Install(b)
	b.Setenv("PATH", servers.PATH(os.Getenv("PATH")))
	for _, p := range benchProjects {
		b.Run(p.lang, func(b *testing.B) {
			files, edited := p.make(10_000)
			root := workspace(b, files)
			m := New(Config{Root: root, Settings: Settings{Auto: true}, CacheDir: filepath.Join(filepath.Dir(servers.GoBin), "lsp-caches")})
			defer m.Close()
			file := filepath.Join(root, edited)
			start := time.Now()
			first := benchDiagnose(b, m, file)
			cold := time.Since(start)
			if len(first) != 0 {
				b.Fatalf("the project is not clean: %v", first)
			}
			good, err := os.ReadFile(file)
			if err != nil {
				b.Fatal(err)
			}
			bad := []byte(strings.Replace(string(good), p.good, p.bad, 1))
			for range 3 { // warm: the edit path itself
				benchFlip(b, m, file, bad, good)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				content, want := good, false
				if i%2 == 0 {
					content, want = bad, true
				}
				if err := os.WriteFile(file, content, 0o644); err != nil {
					b.Fatal(err)
				}
				got := benchDiagnose(b, m, file)
				if (len(got) > 0) != want {
					b.Fatalf("edit %d: want errors %v, got %v", i, want, got)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/edit")
			// The first diagnostics of a server started for them: loading
			// the project, not counted above (a session warms its servers
			// when it first reads a file).
			b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
		})
	}
}

func benchFlip(b *testing.B, m *Manager, file string, bad, good []byte) {
	for _, c := range [][]byte{bad, good} {
		if err := os.WriteFile(file, c, 0o644); err != nil {
			b.Fatal(err)
		}
		benchDiagnose(b, m, file)
	}
}

// benchDiagnose returns the file's errors, failing past two minutes.
func benchDiagnose(b *testing.B, m *Manager, file string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := m.Diagnostics(ctx, []string{file}, true)
	if err != nil || got[0].Err != nil || got[0].Pending {
		b.Fatalf("diagnostics: %v %v pending=%v", err, got[0].Err, got[0].Pending)
	}
	var errs []string
	for _, d := range got[0].Diagnostics {
		if d.Severity == 1 {
			errs = append(errs, d.Message)
		}
	}
	return errs
}

// benchProject makes a project of about n lines in one language; edited is
// the file the benchmark changes, and replacing good by bad in it makes an
// error.
type benchProject struct {
	lang      string
	good, bad string
	make      func(n int) (files map[string]string, edited string)
}

var benchProjects = []benchProject{
	{lang: "go", good: "return v + 1", bad: "return v + undefinedName", make: goProject},
	{lang: "typescript", good: "return v + 1;", bad: "return v + undefinedName;", make: tsProject},
	{lang: "python", good: "return v + 1", bad: "return v + undefined_name", make: pyProject},
	{lang: "c", good: "return v + 1;", bad: "return v + undefined_name;", make: cProject},
}

// Each project has 50 files of about n/50 lines: functions that call the
// previous file's, so a change is checked against the rest.

func goProject(n int) (map[string]string, string) {
	files := map[string]string{"go.mod": "module bench\n\ngo 1.22\n"}
	per := n / 50 / 6
	for f := range 50 {
		var b strings.Builder
		b.WriteString("package bench\n\n")
		for i := range per {
			fmt.Fprintf(&b, "// F%d_%d adds one.\nfunc F%d_%d(v int) int {\n", f, i, f, i)
			if f > 0 {
				fmt.Fprintf(&b, "\tv = F%d_%d(v)\n", f-1, i)
			}
			b.WriteString("\treturn v + 1\n}\n\n")
		}
		files[fmt.Sprintf("f%02d.go", f)] = b.String()
	}
	return files, "f25.go"
}

func tsProject(n int) (map[string]string, string) {
	files := map[string]string{"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}`}
	per := n / 50 / 6
	for f := range 50 {
		var b strings.Builder
		if f > 0 {
			fmt.Fprintf(&b, "import * as prev from \"./f%02d\";\n\n", f-1)
		}
		for i := range per {
			fmt.Fprintf(&b, "/** Adds one. */\nexport function f%d(v: number): number {\n", i)
			if f > 0 {
				fmt.Fprintf(&b, "  v = prev.f%d(v);\n", i)
			}
			b.WriteString("  return v + 1;\n}\n\n")
		}
		files[fmt.Sprintf("f%02d.ts", f)] = b.String()
	}
	return files, "f25.ts"
}

func pyProject(n int) (map[string]string, string) {
	files := map[string]string{}
	per := n / 50 / 6
	for f := range 50 {
		var b strings.Builder
		if f > 0 {
			fmt.Fprintf(&b, "import f%02d as prev\n\n\n", f-1)
		}
		for i := range per {
			fmt.Fprintf(&b, "def f%d(v: int) -> int:\n    \"\"\"Adds one.\"\"\"\n", i)
			if f > 0 {
				fmt.Fprintf(&b, "    v = prev.f%d(v)\n", i)
			}
			b.WriteString("    return v + 1\n\n\n")
		}
		files[fmt.Sprintf("f%02d.py", f)] = b.String()
	}
	return files, "f25.py"
}

func cProject(n int) (map[string]string, string) {
	files := map[string]string{}
	per := n / 50 / 7
	for f := range 50 {
		var h, c strings.Builder
		fmt.Fprintf(&c, "#include \"f%02d.h\"\n", f)
		if f > 0 {
			fmt.Fprintf(&c, "#include \"f%02d.h\"\n", f-1)
		}
		c.WriteString("\n")
		for i := range per {
			fmt.Fprintf(&h, "int f%d_%d(int v);\n", f, i)
			fmt.Fprintf(&c, "/* Adds one. */\nint f%d_%d(int v) {\n", f, i)
			if f > 0 {
				fmt.Fprintf(&c, "  v = f%d_%d(v);\n", f-1, i)
			}
			c.WriteString("  return v + 1;\n}\n\n")
		}
		files[fmt.Sprintf("f%02d.h", f)] = h.String()
		files[fmt.Sprintf("f%02d.c", f)] = c.String()
	}
	return files, "f25.c"
}
