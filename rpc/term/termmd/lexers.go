package termmd

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// A family is what the lexer of a language needs to tell apart: its
// comments, strings, keywords and built-in names. Most languages a model
// writes about fit one of a few shapes.
type family struct {
	names       []string
	lineComment string // "//", "#", "--"
	blockC      bool   // /* … */
	backquote   bool   // `raw strings` or templates
	triple      bool   // """ and ''' strings
	shellVars   bool   // $NAME, ${NAME}
	keywords    []string
	builtins    []string
}

// families are built when the first code block is highlighted, not at
// start.
func families() []family {
	return []family{
		{names: []string{"go", "golang"}, lineComment: "//", blockC: true, backquote: true,
			keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
			builtins: words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable true false nil iota append cap clear close complex copy delete imag len make max min new panic print println real recover")},
		{names: []string{"python", "py", "python3"}, lineComment: "#", triple: true,
			keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case"),
			builtins: words("True False None self cls print len range str int float list dict set tuple bool open isinstance super object type enumerate zip map filter sorted sum min max any all")},
		{names: []string{"javascript", "js", "jsx", "typescript", "ts", "tsx", "mjs", "cjs"}, lineComment: "//", blockC: true, backquote: true,
			keywords: words("async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield interface type enum implements private public protected readonly as"),
			builtins: words("true false null undefined NaN Infinity string number boolean any unknown never void console Promise Array Object Map Set JSON Math Error")},
		{names: []string{"c", "h", "cpp", "c++", "cc", "hpp", "java", "kotlin", "kt", "rust", "rs", "swift", "csharp", "cs", "c#", "scala", "dart", "zig", "php"},
			lineComment: "//", blockC: true,
			keywords: words("auto break case catch class const continue default do else enum extern for fn goto if impl import in let loop match mod mut namespace new package private protected public pub return static struct super switch template this throw trait try type typedef union unsafe use using var virtual void volatile where while func guard defer val fun object override interface extends implements final abstract sealed async await yield"),
			builtins: words("true false null nullptr nil None Some Ok Err self Self int long short char float double bool boolean unsigned signed size_t string String str usize isize u8 u16 u32 u64 i8 i16 i32 i64 f32 f64 Vec Option Result Box")},
		{names: []string{"sh", "bash", "shell", "zsh", "console", "shell-session", "sh-session", "ksh", "dash"}, lineComment: "#", shellVars: true,
			keywords: words("if then else elif fi for while until do done case esac in function return export local readonly declare set unset shift exit break continue source alias"),
			builtins: words("echo printf cd pwd test read eval exec trap wait true false")},
		{names: []string{"sql", "postgres", "postgresql", "mysql", "sqlite"}, lineComment: "--", blockC: true,
			keywords: words("select from where and or not insert into values update set delete create table index view drop alter add column primary key foreign references join left right inner outer on group by order having limit offset as distinct union all exists in is null like between case when then else end begin commit rollback returning with default unique constraint"),
			builtins: words("SELECT FROM WHERE AND OR NOT INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE INDEX VIEW DROP ALTER ADD COLUMN PRIMARY KEY FOREIGN REFERENCES JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT OFFSET AS DISTINCT UNION ALL EXISTS IN IS NULL LIKE BETWEEN CASE WHEN THEN ELSE END BEGIN COMMIT ROLLBACK RETURNING WITH DEFAULT UNIQUE CONSTRAINT integer text varchar boolean timestamp serial bigint")},
		{names: []string{"toml", "ini", "cfg", "conf", "dockerfile", "makefile", "make", "mk", "nginx"}, lineComment: "#", shellVars: true,
			builtins: words("true false FROM RUN CMD COPY ADD ENV WORKDIR EXPOSE ENTRYPOINT ARG USER VOLUME LABEL")},
	}
}

func words(s string) []string { return strings.Fields(s) }

var (
	lexersOnce sync.Once
	lexers     map[string]lexer
)

// lexerFor finds the lexer of a fence's language; its rules are compiled
// the first time it is used.
func lexerFor(lang string) lexer {
	lexersOnce.Do(func() {
		lexers = map[string]lexer{}
		for _, f := range families() {
			l := f.rules()
			for _, n := range f.names {
				lexers[n] = l
			}
		}
		for _, n := range []string{"json", "jsonc", "json5", "jsonl"} {
			lexers[n] = jsonRules()
		}
		for _, n := range []string{"yaml", "yml"} {
			lexers[n] = yamlRules()
		}
		for _, n := range []string{"diff", "patch", "udiff"} {
			lexers[n] = diffRules()
		}
	})
	lang = strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(lang, " {,"); i >= 0 {
		lang = lang[:i]
	}
	return lexers[lang]
}

// rules builds the family's lexer.
func (f family) rules() lexer {
	var root lexer
	add := func(pattern string, t tokenType) *rule {
		root = append(root, newRule(pattern, t))
		return &root[len(root)-1]
	}
	add(`\s+`, tText)
	switch f.lineComment {
	case "#":
		// Only at the start of a word: "a#b" in a shell word is no comment.
		add(`#[^\n]*`, tComment).at = afterSpace(";|&(")
	case "":
	default:
		add(regexp.QuoteMeta(f.lineComment)+`[^\n]*`, tComment)
	}
	if f.blockC {
		add(`/\*[\s\S]*?(\*/|\z)`, tComment)
	}
	if f.triple {
		add(`"""[\s\S]*?("""|\z)`, tString)
		add(`'''[\s\S]*?('''|\z)`, tString)
	}
	if f.backquote {
		add("`[^`]*(`|\\z)", tString)
	}
	if f.shellVars {
		add(`\$\{[^}\n]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9#?@*$!-]`, tVariable)
		add(`'[^']*('|\z)`, tString)
	}
	add(`"(\\[\s\S]|[^"\\\n])*("|$)`, tString)
	if !f.shellVars {
		add(`'(\\[\s\S]|[^'\\\n])*('|$)`, tChar)
	}
	add(`(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?)[a-zA-Z]*\b`, tNumber).at = wordStart
	if len(f.keywords) > 0 {
		add(wordsPattern(f.keywords), tKeyword).at = wordStart
	}
	if len(f.builtins) > 0 {
		add(wordsPattern(f.builtins), tBuiltin).at = wordStart
	}
	if !f.shellVars {
		add(`[A-Za-z_][A-Za-z0-9_]*`, tFunction).then = followedBy('(')
	}
	add(`[A-Za-z_][A-Za-z0-9_-]*`, tName)
	return root
}

// wordsPattern matches one of words as a whole word, the longest first.
func wordsPattern(words []string) string {
	ws := slices.Clone(words)
	slices.SortStableFunc(ws, func(a, b string) int { return len(b) - len(a) })
	for i, w := range ws {
		ws[i] = regexp.QuoteMeta(w)
	}
	return `(` + strings.Join(ws, `|`) + `)\b`
}

func jsonRules() lexer {
	key := newRule(`"(\\[\s\S]|[^"\\\n])*"`, tTag)
	key.then = followedBy(':')
	constant := newRule(`(true|false|null)\b`, tBuiltin)
	constant.at = wordStart
	return lexer{
		newRule(`\s+`, tText),
		newRule(`//[^\n]*`, tComment),
		key,
		newRule(`"(\\[\s\S]|[^"\\\n])*("|$)`, tString),
		newRule(`-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`, tNumber),
		constant,
	}
}

func yamlRules() lexer {
	comment := newRule(`#[^\n]*`, tComment)
	comment.at = afterSpace("")
	heading := newRule(`---$|\.\.\.$`, tHeading)
	heading.at = lineStart
	constant := newRule(`(true|false|null|yes|no|on|off)\b`, tBuiltin)
	constant.at = wordStart
	return lexer{
		newRule(`\s+`, tText),
		comment,
		heading,
		{t: tTag, end: yamlKey},
		newRule(`"(\\[\s\S]|[^"\\\n])*("|$)|'[^'\n]*('|$)`, tString),
		constant,
		newRule(`~`, tBuiltin),
		newRule(`-?[0-9]+(\.[0-9]+)?\b`, tNumber),
		newRule(`[&*][A-Za-z0-9_-]+`, tVariable),
		newRule(`[^\s#]+`, tText),
	}
}

// yamlKey is a mapping's key: a word that does not start like a
// sequence, a flow or a quote, up to the first colon followed by a space
// or the line's end, with no comment before it.
func yamlKey(code string, pos int) (int, bool) {
	r, n := utf8.DecodeRuneInString(code[pos:])
	if unicode.IsSpace(r) || strings.ContainsRune(":#'\"[]{},-", r) {
		return 0, false
	}
	for i := pos + n; i < len(code); i++ {
		switch code[i] {
		case '#', '\n':
			return 0, false
		case ':':
			if i+1 == len(code) || code[i+1] == '\n' || unicode.IsSpace(rune(code[i+1])) {
				return i, true
			}
			return 0, false
		}
	}
	return 0, false
}

func diffRules() lexer {
	var l lexer
	for _, r := range []struct {
		pattern string
		t       tokenType
	}{
		{`(diff|index|---|\+\+\+)[^\n]*\n?`, tHeading},
		{`@@[^\n]*\n?`, tSubheading},
		{`\+[^\n]*\n?`, tInserted},
		{`-[^\n]*\n?`, tDeleted},
		{`[^\n]*\n?`, tText},
	} {
		rule := newRule(r.pattern, r.t)
		rule.at = lineStart
		l = append(l, rule)
	}
	return l
}
