package contract

import (
	"strings"
)

// Lua writes the contract as a Lua module for the Neovim plugin: the
// method names by direction and key, the enumerations as lists, the error
// codes, how each kind is answered, and every type as LuaLS annotations
// (agentd.RunParams, …) for the language server and the reader.
func Lua(c *Contract) []byte {
	var w luaWriter
	w.line("-- " + strings.ReplaceAll(header, "\n", "\n-- "))
	w.line("local M = {}")
	w.line("")
	w.line("M.VERSION = %d", c.ProtocolVersion)
	for _, dir := range []struct {
		table string
		d     Direction
	}{{"request", Request}, {"notification", Notification}, {"server_notification", ServerNotification}, {"server_request", ServerRequest}} {
		w.line("")
		w.line("M.%s = {", dir.table)
		for _, m := range sortedMethods(c) {
			if md := c.Methods[m]; md.Direction == dir.d {
				w.line("  %s = %s,", snake(md.Key), quote(m))
			}
		}
		w.line("}")
	}
	w.line("")
	w.line("M.error_codes = {")
	for _, name := range sortedKeys(c.ErrorCodes) {
		w.line("  %s = %d,", name, c.ErrorCodes[name])
	}
	w.line("}")
	w.line("")
	w.line("--- How each kind of input request is answered.")
	w.line("M.kinds = {")
	for _, k := range sortedKeys(c.Kinds) {
		w.line("  %s = { answer = %s, secret = %t },", k, quote(c.Kinds[k].Answer), c.Kinds[k].Secret)
	}
	w.line("}")
	for _, name := range sortedKeys(c.Enums) {
		e := c.Enums[name]
		w.line("")
		w.doc(e.Doc)
		w.line("M.%s = { %s }", snake(e.List), quoteAll(e.Values))
		w.line("---@alias agentd.%s %s", name, strings.Join(quotedAll(e.Values, `'`), "|"))
	}
	for _, name := range sortedKeys(c.Types) {
		s := c.Types[name]
		w.line("")
		w.doc(s.Doc)
		w.line("---@class agentd.%s", name)
		for _, f := range s.Fields {
			opt := ""
			if f.Optional {
				opt = "?"
			}
			doc := ""
			if f.Doc != "" {
				doc = " " + strings.Join(strings.Fields(f.Doc), " ")
			}
			w.line("---@field %s%s %s%s", f.Name, opt, luaType(f.Type), doc)
		}
	}
	w.line("")
	w.line("return M")
	return []byte(w.String())
}

type luaWriter struct{ writer }

func (w *luaWriter) doc(doc string) {
	for _, l := range wrap(doc, 100) {
		w.line(strings.TrimRight("--- "+l, " "))
	}
}

// luaType is a type expression in LuaLS's annotation syntax.
func luaType(t Type) string {
	var s string
	switch t.Kind {
	case KindString:
		s = "string"
	case KindInteger:
		s = "integer"
	case KindNumber:
		s = "number"
	case KindBoolean:
		s = "boolean"
	case KindAny:
		s = "any"
	case KindNull:
		s = "nil"
	case KindArray:
		s = luaType(*t.Of)
		if strings.ContainsAny(s, "|{ ") {
			s = "(" + s + ")"
		}
		s += "[]"
	case KindMap:
		s = "table<string, " + luaType(*t.Of) + ">"
	case KindRef:
		s = "agentd." + t.Ref
	case KindUnion:
		s = "agentd." + strings.Join(t.Refs, "|agentd.")
	case KindObject:
		if len(t.Fields) == 0 {
			s = "table"
			break
		}
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			opt := ""
			if f.Optional {
				opt = "?"
			}
			parts[i] = f.Name + opt + ": " + luaType(f.Type)
		}
		s = "{ " + strings.Join(parts, ", ") + " }"
	}
	if t.Nullable {
		s += "|nil"
	}
	return s
}

func quotedAll(xs []string, q string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = q + x + q
	}
	return out
}
