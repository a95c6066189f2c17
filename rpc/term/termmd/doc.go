// Package termmd renders the model's markdown for a terminal: headings,
// emphasis, lists, quotes, tables and fenced code with syntax colour, laid
// out for the terminal's width.
//
// The Markdown parser is this package's own (parse.go, inline.go):
// CommonMark's blocks and inlines that models write, and GitHub's tables,
// strikethrough and task lists. A full library (goldmark) compiled its
// regexps and built its tables at program start, a millisecond and 600 kB
// for every start of agentd, the editors' daemons included, which never
// render Markdown.
//
// The lexers are this package's own too, a few dozen rules per language on
// chroma's engine (it owns chroma; its types stay inside), compiled on
// first use: chroma's own lexer collection parses its 279 definitions at
// program start, which would add some 6 ms and 5 MB to every start.
package termmd
