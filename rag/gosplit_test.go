package rag

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// astDecls is what go/parser says goDecls should find.
func astDecls(src string) (int, string, []goDecl, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return 0, "", nil, false
	}
	var out []goDecl
	for _, d := range f.Decls {
		g := goDecl{first: fset.PositionFor(d.Pos(), false).Line, last: fset.PositionFor(d.End(), false).Line}
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.isFunc = true
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				name = astRecv(d.Recv.List[0].Type) + "." + name
			}
			g.symbols = []string{name}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				g.symbols = []string{"import"}
				break
			}
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Name.Name != "_" {
						g.symbols = append(g.symbols, s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							g.symbols = append(g.symbols, n.Name)
						}
					}
				}
			}
		}
		out = append(out, g)
	}
	return fset.PositionFor(f.Package, false).Line, f.Name.Name, out, true
}

func astRecv(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

func TestGoDeclsSmall(t *testing.T) {
	src := "// Package p.\npackage p\n\nimport (\n\t\"fmt\"\n)\n\nvar a, b = f(1,\n\t2), `x\ny`\n\nconst (\n\tA = iota\n\tB\n\t_\n\tC, D = 1, 2\n)\n\n" +
		"type (\n\tT[K comparable] struct{ x [2]int }\n\tU = T[int]\n)\n\nfunc (t *T[K]) M(x int) (int, error) {\n\treturn 0, nil\n}\n\n" +
		"func F() { fmt.Println(\"}\") }; func G()\n\nvar h = func() int {\n\treturn 1\n}()\n"
	_, pkg, got, ok := goDecls(src)
	_, _, want, _ := astDecls(src)
	if !ok || pkg != "p" {
		t.Fatalf("goDecls failed: ok=%v pkg=%q", ok, pkg)
	}
	if !slices.EqualFunc(got, want, eqDecl) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func eqDecl(a, b goDecl) bool {
	return a.first == b.first && a.last == b.last && a.isFunc == b.isFunc && slices.Equal(a.symbols, b.symbols)
}

// TestGoDeclsMatchParser checks the lexer against go/parser on every file
// of GOROOT/src that parses.
func TestGoDeclsMatchParser(t *testing.T) {
	if testing.Short() {
		t.Skip("reads GOROOT")
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skip("no go command")
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	n, bad := 0, 0
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		if strings.HasSuffix(p, "decls2a.go") {
			return nil // an invalid receiver ([]int) that the AST calls "?"
		}
		wl, wp, want, ok := astDecls(string(data))
		if !ok {
			return nil
		}
		n++
		gl, gp, got, ok := goDecls(string(data))
		if !ok || gl != wl || gp != wp || !slices.EqualFunc(got, want, eqDecl) {
			bad++
			if bad <= 5 {
				for i := range min(len(got), len(want)) {
					if !eqDecl(got[i], want[i]) {
						t.Errorf("%s: ok=%v decl %d: got %+v want %+v", p, ok, i, got[i], want[i])
						break
					}
				}
				if len(got) != len(want) {
					t.Errorf("%s: ok=%v %d decls, want %d", p, ok, len(got), len(want))
				}
			}
		}
		return nil
	})
	t.Logf("%d files, %d differ", n, bad)
	if bad > 0 {
		t.Fail()
	}
}
