package termmd

import (
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
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
	lexers     map[string]chroma.Lexer
)

// lexerFor finds the lexer of a fence's language; its rules are compiled
// the first time it is used.
func lexerFor(lang string) chroma.Lexer {
	lexersOnce.Do(func() {
		lexers = map[string]chroma.Lexer{}
		for _, f := range families() {
			l := chroma.Coalesce(chroma.MustNewLexer(&chroma.Config{Name: f.names[0], Aliases: f.names}, f.rules))
			for _, n := range f.names {
				lexers[n] = l
			}
		}
		for _, n := range []string{"json", "jsonc", "json5", "jsonl"} {
			lexers[n] = chroma.Coalesce(chroma.MustNewLexer(&chroma.Config{Name: "json"}, jsonRules))
		}
		for _, n := range []string{"yaml", "yml"} {
			lexers[n] = chroma.Coalesce(chroma.MustNewLexer(&chroma.Config{Name: "yaml"}, yamlRules))
		}
		for _, n := range []string{"diff", "patch", "udiff"} {
			lexers[n] = chroma.Coalesce(chroma.MustNewLexer(&chroma.Config{Name: "diff"}, diffRules))
		}
	})
	lang = strings.ToLower(strings.TrimSpace(lang))
	if i := strings.IndexAny(lang, " {,"); i >= 0 {
		lang = lang[:i]
	}
	return lexers[lang]
}

// rules builds the family's lexer.
func (f family) rules() chroma.Rules {
	var root []chroma.Rule
	add := func(pattern string, t chroma.TokenType, m chroma.Mutator) {
		root = append(root, chroma.Rule{Pattern: pattern, Type: t, Mutator: m})
	}
	add(`\s+`, chroma.Text, nil)
	switch f.lineComment {
	case "#":
		// Only at the start of a word: "a#b" in a shell word is no comment.
		add(`(?<![^\s;|&(])#[^\n]*`, chroma.CommentSingle, nil)
	case "":
	default:
		add(escape(f.lineComment)+`[^\n]*`, chroma.CommentSingle, nil)
	}
	if f.blockC {
		add(`/\*[\s\S]*?(\*/|\z)`, chroma.CommentMultiline, nil)
	}
	if f.triple {
		add(`"""[\s\S]*?("""|\z)`, chroma.LiteralString, nil)
		add(`'''[\s\S]*?('''|\z)`, chroma.LiteralString, nil)
	}
	if f.backquote {
		add("`[^`]*(`|\\z)", chroma.LiteralString, nil)
	}
	if f.shellVars {
		add(`\$\{[^}\n]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\$[0-9#?@*$!-]`, chroma.NameVariable, nil)
		add(`'[^']*('|\z)`, chroma.LiteralString, nil)
	}
	add(`"(\\[\s\S]|[^"\\\n])*("|$)`, chroma.LiteralString, nil)
	if !f.shellVars {
		add(`'(\\[\s\S]|[^'\\\n])*('|$)`, chroma.LiteralStringChar, nil)
	}
	add(`\b(0[xX][0-9a-fA-F_]+|0[bB][01_]+|[0-9][0-9_]*(\.[0-9_]+)?([eE][+-]?[0-9]+)?)[a-zA-Z]*\b`, chroma.LiteralNumber, nil)
	if len(f.keywords) > 0 {
		add(chroma.Words(`\b`, `\b`, f.keywords...), chroma.Keyword, nil)
	}
	if len(f.builtins) > 0 {
		add(chroma.Words(`\b`, `\b`, f.builtins...), chroma.NameBuiltin, nil)
	}
	if !f.shellVars {
		add(`[A-Za-z_][A-Za-z0-9_]*(?=\s*\()`, chroma.NameFunction, nil)
	}
	add(`[A-Za-z_][A-Za-z0-9_-]*`, chroma.Name, nil)
	add(`[\s\S]`, chroma.Text, nil)
	return chroma.Rules{"root": root}
}

func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$#/-`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func jsonRules() chroma.Rules {
	return chroma.Rules{"root": {
		{Pattern: `\s+`, Type: chroma.Text},
		{Pattern: `//[^\n]*`, Type: chroma.CommentSingle},
		{Pattern: `"(\\[\s\S]|[^"\\\n])*"(?=\s*:)`, Type: chroma.NameTag},
		{Pattern: `"(\\[\s\S]|[^"\\\n])*("|$)`, Type: chroma.LiteralString},
		{Pattern: `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`, Type: chroma.LiteralNumber},
		{Pattern: `\b(true|false|null)\b`, Type: chroma.KeywordConstant},
		{Pattern: `[\s\S]`, Type: chroma.Text},
	}}
}

func yamlRules() chroma.Rules {
	return chroma.Rules{"root": {
		{Pattern: `\s+`, Type: chroma.Text},
		{Pattern: `(?<![^\s])#[^\n]*`, Type: chroma.CommentSingle},
		{Pattern: `^---$|^\.\.\.$`, Type: chroma.GenericHeading},
		{Pattern: `[^\s:#'"\[\]{},-][^:#\n]*?(?=:(\s|$))`, Type: chroma.NameTag},
		{Pattern: `"(\\[\s\S]|[^"\\\n])*("|$)|'[^'\n]*('|$)`, Type: chroma.LiteralString},
		{Pattern: `\b(true|false|null|yes|no|on|off)\b|~`, Type: chroma.KeywordConstant},
		{Pattern: `-?[0-9]+(\.[0-9]+)?\b`, Type: chroma.LiteralNumber},
		{Pattern: `[&*][A-Za-z0-9_-]+`, Type: chroma.NameVariable},
		{Pattern: `[^\s#]+`, Type: chroma.Text},
		{Pattern: `[\s\S]`, Type: chroma.Text},
	}}
}

func diffRules() chroma.Rules {
	return chroma.Rules{"root": {
		{Pattern: `^(diff|index|---|\+\+\+)[^\n]*\n?`, Type: chroma.GenericHeading},
		{Pattern: `^@@[^\n]*\n?`, Type: chroma.GenericSubheading},
		{Pattern: `^\+[^\n]*\n?`, Type: chroma.GenericInserted},
		{Pattern: `^-[^\n]*\n?`, Type: chroma.GenericDeleted},
		{Pattern: `[^\n]*\n?`, Type: chroma.Text},
	}}
}
