package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// docs reads the doc comments of the module's types from their source.
type docs struct {
	root, module string
	pkgs         map[string]map[string]*ast.TypeSpec // package path → type name → its spec (Doc set from the GenDecl when alone)
}

func newDocs(root, module string) *docs {
	return &docs{root: root, module: module, pkgs: map[string]map[string]*ast.TypeSpec{}}
}

// spec finds the declaration of a named type of the module.
func (d *docs) spec(t reflect.Type) *ast.TypeSpec {
	pkg := t.PkgPath()
	if pkg != d.module && !strings.HasPrefix(pkg, d.module+"/") {
		return nil
	}
	specs, ok := d.pkgs[pkg]
	if !ok {
		specs = map[string]*ast.TypeSpec{}
		d.pkgs[pkg] = specs
		dir := filepath.Join(d.root, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, d.module), "/")))
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			// Test files too: a contract test may declare types of its
			// own (what a library's types say of the wire).
			if !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					if ts.Doc == nil && len(gd.Specs) == 1 {
						ts.Doc = gd.Doc
					}
					if _, ok := specs[ts.Name.Name]; !ok || !strings.HasSuffix(e.Name(), "_test.go") {
						specs[ts.Name.Name] = ts
					}
				}
			}
		}
	}
	return specs[t.Name()]
}

func (d *docs) typeDoc(t reflect.Type) string {
	if s := d.spec(t); s != nil {
		return clean(s.Doc)
	}
	return ""
}

func (d *docs) fieldDoc(t reflect.Type, field string) string {
	s := d.spec(t)
	if s == nil {
		return ""
	}
	st, ok := s.Type.(*ast.StructType)
	if !ok {
		return ""
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name != field {
				continue
			}
			if f.Doc != nil {
				return clean(f.Doc)
			}
			return clean(f.Comment)
		}
	}
	return ""
}

// clean is a comment's text in one paragraph per blank-line-separated
// block, lines joined.
func clean(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(g.Text()), "\n\n") {
		paras = append(paras, strings.Join(strings.Fields(p), " "))
	}
	return strings.Join(paras, "\n\n")
}
