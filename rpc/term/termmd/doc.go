// Package termmd renders the model's markdown for a terminal: headings,
// emphasis, lists, quotes, tables and fenced code with syntax colour, laid
// out for the terminal's width. It owns the two libraries that do it,
// goldmark (the CommonMark parser, with GitHub's tables, strikethrough and
// task lists) and chroma (the highlighter's engine); neither's types leave
// the package.
//
// The lexers are this package's own, a few dozen rules per language on
// chroma's engine, compiled on first use: chroma's own lexer collection
// parses its 279 definitions at program start, which would add some 6 ms
// and 5 MB to every start of agentd, editors' included.
package termmd
