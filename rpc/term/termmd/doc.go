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
// The lexers are this package's own too (lexers.go, scan.go): a few
// dozen rules per language on Go's regexps, compiled on first use. They
// ran on chroma's engine before, whose regexp library (regexp2) built its
// Unicode tables at every start of agentd, a tenth of a millisecond and
// 40 kB before the editors' daemons could answer initialize; the tokens
// are the same (the colours of every file of chroma's own test corpus,
// this repository and Python's library came out byte for byte alike).
package termmd
