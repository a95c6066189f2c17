package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Builder derives the contract's types from Go types.
type Builder struct {
	docs    *docs
	names   map[reflect.Type]string // a named type's name in the contract
	renames map[reflect.Type]string
	enums   map[reflect.Type]Enum
	types   map[string]Struct
	owners  map[string]reflect.Type // which Go type took each name
	unions  []reflect.Type          // the types a contract:"A|B" tag may name
	lists   []namedEnum
	errs    []error
}

// NewBuilder reads the docs of the module's packages from the source
// under root (the directory of go.mod), whose module path is module.
func NewBuilder(root, module string) *Builder {
	return &Builder{docs: newDocs(root, module), names: map[reflect.Type]string{}, renames: map[reflect.Type]string{},
		enums: map[reflect.Type]Enum{}, types: map[string]Struct{}, owners: map[string]reflect.Type{}}
}

// Rename gives the Go type of v another name in the contract (two packages'
// types of one name, or a name too generic for the clients' namespace).
func (b *Builder) Rename(v any, name string) {
	b.renames[reflect.TypeOf(v)] = name
}

// Enum registers the values of a named string type (v is one of its
// values, or any value of it), its name in the contract and the name of
// its list. A string field of this type is then a reference to the enum.
func (b *Builder) Enum(v any, name, list string, values []string) {
	t := reflect.TypeOf(v)
	b.enums[t] = Enum{Doc: renamedDoc(b.docs.typeDoc(t), t.Name(), name), List: list, Values: values}
	b.claim(name, t)
	b.names[t] = name
}

// List registers an enumeration whose Go values are plain strings (no
// named type): it is in the contract, but fields stay strings.
func (b *Builder) List(name, list, doc string, values []string) {
	b.lists = append(b.lists, namedEnum{name, Enum{Doc: doc, List: list, Values: values}})
}

type namedEnum struct {
	name string
	enum Enum
}

// Union registers the named types a field tagged contract:"A|B" may name.
func (b *Builder) Union(vs ...any) {
	for _, v := range vs {
		b.unions = append(b.unions, reflect.TypeOf(v))
	}
}

// Type describes t, registering the named structs it uses.
func (b *Builder) Type(t reflect.Type) Type {
	switch {
	case t == reflect.TypeFor[time.Time]():
		return Type{Kind: KindString, Format: "date-time"}
	case t == reflect.TypeFor[json.RawMessage]():
		return Type{Kind: KindAny}
	}
	if _, ok := b.enums[t]; ok {
		return Type{Kind: KindRef, Ref: b.names[t]}
	}
	if t.Kind() != reflect.Pointer && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		b.fail("%s has a MarshalJSON of its own: describe it (Builder.Enum, or a contract tag on the field)", t)
		return Type{Kind: KindAny}
	}
	switch t.Kind() {
	case reflect.String:
		if t.Name() != "string" && t.PkgPath() != "" {
			b.fail("%s is a named string type without registered values (Builder.Enum)", t)
		}
		return Type{Kind: KindString}
	case reflect.Bool:
		return Type{Kind: KindBoolean}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Type{Kind: KindInteger}
	case reflect.Float32, reflect.Float64:
		return Type{Kind: KindNumber}
	case reflect.Interface:
		return Type{Kind: KindAny}
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct && t.Elem().NumField() == 0 {
			return Type{Kind: KindNull}
		}
		inner := b.Type(t.Elem())
		inner.Nullable = true
		return inner
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return Type{Kind: KindString} // []byte: base64
		}
		of := b.Type(t.Elem())
		return Type{Kind: KindArray, Of: &of}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			b.fail("%s: a map's keys must be strings", t)
		}
		of := b.Type(t.Elem())
		return Type{Kind: KindMap, Of: &of}
	case reflect.Struct:
		if t.Name() == "" {
			return Type{Kind: KindObject, Fields: b.fields(t)}
		}
		name := b.nameOf(t)
		if _, ok := b.types[name]; !ok {
			b.types[name] = Struct{} // a placeholder while its fields are walked (recursive types)
			b.types[name] = Struct{Doc: renamedDoc(b.docs.typeDoc(t), t.Name(), name), Fields: b.fields(t)}
		}
		return Type{Kind: KindRef, Ref: name}
	}
	b.fail("%s: %s cannot go on the wire", t, t.Kind())
	return Type{Kind: KindAny}
}

var marshaler = reflect.TypeFor[json.Marshaler]()

// renamedDoc is a Go type's doc with its first word, the Go name, replaced
// by the name the contract gives it.
func renamedDoc(doc, goName, name string) string {
	if rest, ok := strings.CutPrefix(doc, goName+" "); ok && goName != name {
		return name + " " + rest
	}
	return doc
}

// nameOf is a named type's name in the contract, claimed the first time.
func (b *Builder) nameOf(t reflect.Type) string {
	if n, ok := b.names[t]; ok {
		return n
	}
	n := t.Name()
	if r, ok := b.renames[t]; ok {
		n = r
	}
	b.claim(n, t)
	b.names[t] = n
	return n
}

func (b *Builder) claim(name string, t reflect.Type) {
	if other, ok := b.owners[name]; ok && other != t {
		b.fail("%s and %s are both named %s in the contract: rename one (Builder.Rename)", other, t, name)
	}
	b.owners[name] = t
}

// fields lists a struct's members as encoding/json writes them.
func (b *Builder) fields(t reflect.Type) []Field {
	var out []Field
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for _, ef := range b.fields(et) {
					if !slices.ContainsFunc(out, func(o Field) bool { return o.Name == ef.Name }) {
						out = append(out, ef)
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		field := Field{Name: name, Optional: slices.Contains(strings.Split(opts, ","), "omitempty"), Doc: b.docs.fieldDoc(t, f.Name)}
		if ref := f.Tag.Get("contract"); ref != "" {
			field.Type = b.tagged(t, f, ref)
		} else {
			field.Type = b.Type(f.Type)
		}
		if field.Type.Nullable && field.Optional {
			field.Type.Nullable = false // left out rather than null
		}
		out = append(out, field)
	}
	return out
}

// tagged is the type a contract tag names for a field whose Go type says
// less (json.RawMessage holding one of several notifications).
func (b *Builder) tagged(t reflect.Type, f reflect.StructField, tag string) Type {
	names := strings.Split(tag, "|")
	for _, n := range names {
		i := slices.IndexFunc(b.unions, func(u reflect.Type) bool { return b.nameOf(u) == n })
		if i < 0 {
			b.fail("%s.%s: contract tag names %s, which is not registered (Builder.Union)", t, f.Name, n)
			continue
		}
		b.Type(b.unions[i])
	}
	if len(names) == 1 {
		return Type{Kind: KindRef, Ref: names[0]}
	}
	return Type{Kind: KindUnion, Refs: names}
}

func (b *Builder) fail(format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf(format, args...))
}

// Describe fills c's Types and Enums with what the builder met, and
// returns every problem it found.
func (b *Builder) Describe(c *Contract) error {
	c.Types = b.types
	c.Enums = map[string]Enum{}
	for t, e := range b.enums {
		c.Enums[b.names[t]] = e
	}
	for _, l := range b.lists {
		if _, ok := c.Enums[l.name]; ok || b.types[l.name].Fields != nil {
			b.fail("two types are named %s", l.name)
		}
		c.Enums[l.name] = l.enum
	}
	for name, m := range c.Methods {
		for _, t := range []*Type{m.Params, m.Result} {
			if t != nil && t.Kind == KindRef && b.types[t.Ref].Fields == nil && c.Enums[t.Ref].Values == nil {
				if _, ok := b.types[t.Ref]; !ok {
					b.fail("method %s names %s, which is not described", name, t.Ref)
				}
			}
		}
	}
	if len(b.errs) == 0 {
		return nil
	}
	msgs := make([]string, len(b.errs))
	for i, e := range b.errs {
		msgs[i] = e.Error()
	}
	slices.Sort(msgs)
	return fmt.Errorf("contract:\n  %s", strings.Join(slices.Compact(msgs), "\n  "))
}
