package rag

import (
	"slices"
	"sync"
	"unicode/utf8"
)

// tokenizer turns text into index terms. It keeps scratch buffers, so one
// tokenizer must not be shared between goroutines.
type tokenizer struct {
	lower []byte
	part  []byte
}

// each calls emit for every term of text. Every identifier yields its
// lowercased whole form when it has several parts, and each camelCase or
// snake_case part, stemmed and with common abbreviations folded so that
// "configuration" and "cfg" meet. The slice passed to emit is only valid
// during the call.
func (tk *tokenizer) each(text string, emit func([]byte)) {
	eachIdent(text, func(w string) { tk.word(w, emit) })
}

// eachIdent calls fn for every run of identifier bytes in text.
func eachIdent(text string, fn func(string)) {
	for i := 0; i < len(text); {
		if !isIdentByte(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isIdentByte(text[j]) {
			j++
		}
		fn(text[i:j])
		i = j
	}
}

// terms returns the terms of text as strings, in order, with repeats.
func (tk *tokenizer) terms(text string) []string {
	var out []string
	tk.each(text, func(b []byte) { out = append(out, string(b)) })
	return out
}

// isIdentByte accepts bytes of identifiers; bytes of multi-byte UTF-8
// sequences count so that non-ASCII identifiers stay whole.
func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}

func (tk *tokenizer) word(w string, emit func([]byte)) {
	for len(w) > 0 && w[0] == '_' {
		w = w[1:]
	}
	for len(w) > 0 && w[len(w)-1] == '_' {
		w = w[:len(w)-1]
	}
	// Numbers, hex literals and long blobs (base64, hashes) are noise.
	if len(w) < 2 || len(w) > 64 || w[0] >= '0' && w[0] <= '9' {
		return
	}
	parts := 0
	forParts(w, func(string) { parts++ })
	if parts == 1 {
		tk.emitNorm(w, emit)
		return
	}
	tk.lower = appendLower(tk.lower[:0], w)
	emit(tk.lower)
	forParts(w, func(p string) {
		if len(p) >= 2 {
			tk.emitNorm(p, emit)
		}
	})
}

func (tk *tokenizer) emitNorm(p string, emit func([]byte)) {
	tk.part = appendLower(tk.part[:0], p)
	if isStopword(tk.part) {
		return
	}
	emit(foldTerm(tk.part))
}

// forParts splits an identifier at underscores and case changes:
// HTTPServer → HTTP, Server; read_all → read, all. Digits stay attached.
func forParts(w string, fn func(string)) {
	start := 0
	for i := 1; i <= len(w); i++ {
		if i < len(w) && !partBoundary(w, i) {
			continue
		}
		p := w[start:i]
		for len(p) > 0 && p[0] == '_' {
			p = p[1:]
		}
		if p != "" {
			fn(p)
		}
		start = i
	}
}

func partBoundary(w string, i int) bool {
	c, prev := w[i], w[i-1]
	switch {
	case c == '_':
		return true
	case isUpper(c) && isLower(prev):
		return true
	case isUpper(prev) && isUpper(c) && i+1 < len(w) && isLower(w[i+1]):
		return true
	}
	return false
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// foldTerm folds an abbreviation or stems a lowercase word in place.
func foldTerm(w []byte) []byte {
	if c, ok := canonical()[string(w)]; ok {
		return append(w[:0], c...)
	}
	w = stem(w)
	if c, ok := canonical()[string(w)]; ok {
		return append(w[:0], c...)
	}
	return w
}

// stem is a deliberately light English stemmer: plural endings, then one of
// -ing/-ed/-er, then a final e, so parse, parses, parsed, parsing and parser
// all meet. It errs towards merging; BM25 keeps whole identifiers as well.
func stem(w []byte) []byte {
	n := len(w)
	if n <= 3 || w[0] >= utf8.RuneSelf {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && n > 4:
		w = append(w[:n-3], 'y')
	case hasSuffix(w, "sses"), hasSuffix(w, "xes"), hasSuffix(w, "ches"), hasSuffix(w, "shes"), hasSuffix(w, "zes"):
		w = w[:n-2]
	case w[n-1] == 's' && !hasSuffix(w, "ss") && !hasSuffix(w, "us") && !hasSuffix(w, "is"):
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case hasSuffix(w, "ing") && n >= 6:
		w = undouble(w[:n-3])
	case hasSuffix(w, "ed") && n >= 6:
		w = undouble(w[:n-2])
	case hasSuffix(w, "er") && n >= 6:
		w = undouble(w[:n-2])
	}
	if n = len(w); n >= 4 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

func undouble(w []byte) []byte {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z' && !isVowel(w[n-1]) {
		return w[:n-1]
	}
	return w
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func isStopword(w []byte) bool {
	_, ok := stopwords()[string(w)]
	return ok
}

// stopwords, canonical, synonyms and changeVerbs are built on first use,
// not at program start: every editor's agentd links rag, and most of them
// answer initialize long before they tokenize anything.
var stopwords = sync.OnceValue(func() map[string]struct{} {
	return setOf("a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
		"how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "so", "that",
		"the", "their", "then", "there", "these", "this", "to", "was", "we", "what", "when", "where",
		"which", "who", "why", "will", "with", "you", "your", "some", "any", "all", "get", "gets")
})

// abbreviations maps the short form programmers write to the long forms a
// question uses. canonical is built from it, keyed by long forms and by
// their stems, so both sides of a query meet on the short form.
var abbreviations = map[string][]string{
	"config": {"configuration", "configure", "cfg", "conf"},
	"msg":    {"message"},
	"req":    {"request"},
	"resp":   {"response"},
	"err":    {"error"},
	"ctx":    {"context"},
	"buf":    {"buffer"},
	"init":   {"initialize", "initialise", "initialization", "initialisation"},
	"dir":    {"directory", "directories"},
	"len":    {"length"},
	"num":    {"number"},
	"int":    {"integer"},
	"pow":    {"power"},
	"str":    {"string"},
	"arg":    {"argument"},
	"param":  {"parameter"},
	"tmp":    {"temporary", "temp"},
	"func":   {"function", "fn"},
	"env":    {"environment"},
	"var":    {"variable"},
	"val":    {"value"},
	"cmd":    {"command"},
	"pkg":    {"package"},
	"ref":    {"reference"},
	"spec":   {"specification"},
	"auth":   {"authentication", "authorization", "authenticate", "authorize"},
	"doc":    {"document", "documentation"},
	"info":   {"information"},
	"expr":   {"expression"},
	"stmt":   {"statement"},
	"pos":    {"position"},
	"prev":   {"previous"},
	"cur":    {"current"},
	"dst":    {"destination"},
	"src":    {"source"},
	"addr":   {"address"},
	"conn":   {"connection"},
	"alloc":  {"allocate", "allocation"},
	"attr":   {"attribute"},
	"char":   {"character"},
	"util":   {"utility", "utilities"},
	"iter":   {"iterator", "iterate", "iteration"},
	"max":    {"maximum"},
	"min":    {"minimum"},
	"lib":    {"library"},
	"seq":    {"sequence"},
	"regexp": {"regex", "regular"},
	"db":     {"database"},
	"repo":   {"repository"},
	"app":    {"application"},
	"desc":   {"description"},
	"exec":   {"execute", "execution"},
	"id":     {"identifier"},
	"img":    {"image"},
	"sync":   {"synchronize", "synchronization"},
	"obj":    {"object"},
	"opt":    {"option"},
	"tok":    {"token"},
	"sig":    {"signal"},
}

var canonical = sync.OnceValue(func() map[string]string {
	m := make(map[string]string)
	for short, longs := range abbreviations {
		for _, l := range append(longs, short) {
			m[l] = short
			m[string(stem([]byte(l)))] = short
		}
	}
	return m
})

func setOf(words ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}

// synonymGroups are words programmers use for the same thing: a question
// may use one while the code uses another. Queries are expanded with them
// at a lower weight (rankParams.synonymWeight); the index is not.
var synonymGroups = [][]string{
	{"persist", "save", "store"},
	{"delete", "remove", "erase"},
	{"find", "search", "lookup", "locate"},
	{"check", "validate", "verify"},
	{"fetch", "download", "retrieve"},
	{"run", "exec", "invoke"},
	{"stop", "halt", "terminate", "shutdown"},
	{"start", "launch", "begin"},
	{"send", "emit", "publish"},
	{"show", "display", "render", "print"},
	{"config", "setting", "option", "preference"},
	{"error", "failure", "fault"},
	{"dir", "folder"},
	{"timeout", "deadline"},
	{"copy", "clone", "duplicate"},
	{"watch", "monitor", "observe"},
	{"login", "signin", "auth"},
	{"exit", "quit"},
}

// synonyms maps a term (as the tokenizer emits it) to the other terms of
// its group.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	var tk tokenizer
	for _, g := range synonymGroups {
		var terms []string
		for _, w := range g {
			tk.each(w, func(b []byte) {
				if !slices.Contains(terms, string(b)) {
					terms = append(terms, string(b))
				}
			})
		}
		for _, t := range terms {
			for _, o := range terms {
				if o != t && !slices.Contains(m[t], o) {
					m[t] = append(m[t], o)
				}
			}
		}
	}
	return m
})
