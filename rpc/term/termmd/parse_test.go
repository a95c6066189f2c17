package termmd

import (
	"strings"
	"testing"
)

// What a model writes, laid out without colour: the parser's blocks and
// inlines as a reader sees them.
func TestParseBlocks(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"setext headings", "Title\n=====\n\nPart\n----\ntext", "# Title\n\n## Part\n\ntext"},
		{"closing hashes", "## Part ##\n#no heading", "## Part\n\n#no heading"},
		{"paragraph lines join", "one\ntwo\n\nthree", "one two\n\nthree"},
		{"hard breaks", "one  \ntwo\\\nthree", "one\ntwo\nthree"},
		{"heading interrupts a paragraph", "text\n# Head", "text\n\n# Head"},
		{"a rule, not a list", "* * *\n- - -", "────────────────────────────────────────\n\n────────────────────────────────────────"},
		{"tilde fence with info", "~~~~ python extra\nx = 1\n~~~\n~~~~", "  x = 1\n  ~~~"},
		{"unclosed fence runs to the end", "```\na\n\nb", "  a\n\n  b"},
		{"indented code", "    code\n      more\n\ntext", "  code\n    more\n\ntext"},
		{"lazy quote", "> one\ntwo\n\n> > nested", "│ one two\n\n│ │ nested"},
		{"loose list", "- a\n\n- b", "• a\n\n• b"},
		{"item with two paragraphs", "1. a\n\n   more\n2. b", "1. a\n\n   more\n\n2. b"},
		{"ordered start and delimiter", "7) seven\n8) eight", "7) seven\n8) eight"},
		{"lists of two markers", "- a\n+ b", "• a\n\n• b"},
		{"list in a quote", "> - a\n> - b", "│ • a\n│ • b"},
		{"code in an item", "- run:\n\n  ```sh\n  go test\n  ```", "• run:\n\n    go test"},
		{"lazy item line", "- one\ncontinued", "• one continued"},
		{"a number mid-sentence", "in\n2024. the year", "in 2024. the year"},
		{"html block", "<details>\n<summary>x</summary>\n</details>\n\nafter", "<details>\n<summary>x</summary>\n</details>\n\nafter"},
		{"table with escapes and code", "| a | b |\n|:-:|---|\n| `x|y` | c \\| d |\n| short |", "  a   │ b\n──────┼──────\n`x|y` │ c | d\nshort │"},
		{"no table without its delimiter row", "a | b\nc | d", "a | b c | d"},
		{"task list", "- [ ] open\n- [X] shut", "• [ ] open\n• [x] shut"},
		{"empty item", "-\n- b", "•\n• b"},
	}
	for _, c := range cases {
		if got := strings.TrimSuffix(Render(c.src, 80, false), "\n"); got != c.want {
			t.Errorf("%s:\n%s\n--- got ---\n%s\n--- want ---\n%s", c.name, c.src, got, c.want)
		}
	}
}

func TestParseInlines(t *testing.T) {
	const b, i, s, e = "\x1b[1m", "\x1b[3m", "\x1b[9m", "\x1b[0m"
	cases := []struct{ name, src, want string }{
		{"emphasis", "*a* _b_ **c** __d__", i + "a" + e + " " + i + "b" + e + " " + b + "c" + e + " " + b + "d" + e},
		{"intraword underscores stay", "snake_case_name and 2*3*4", "snake_case_name and 2" + i + "3" + e + "4"},
		{"unmatched stay", "a * b and **c", "a * b and **c"},
		{"bold and italic at once", "***x***", i + "\x1b[3;1mx" + e + i + e},
		{"rule of three", "*a **b** c*", i + "a " + "\x1b[3;1mb" + e + i + " c" + e},
		{"strikethrough", "~~gone~~ ~one~ ~~~no~~~", s + "gone" + e + " " + s + "one" + e + " ~~~no~~~"},
		{"code span", "`a`` b` and `` `x` ``", "\x1b[36ma`` b" + e + " and \x1b[36m`x`" + e},
		{"unclosed code is text", "`open", "`open"},
		{"escapes", `\*lit\* \_ \\ \q`, `*lit* _ \ \q`},
		{"entities", "&lt;tag&gt; &copy; &#65; &#x42; &nope;", "<tag> © A B &nope;"},
		{"link", "[the docs](https://x.y/a_(b) \"t\")", "\x1b[4;34mthe docs" + e + " (https://x.y/a_(b))"},
		{"link whose text is its url", "[https://x.y](https://x.y)", "\x1b[4;34mhttps://x.y" + e},
		{"emphasis in a link", "[*a*](u)", "\x1b[4;34m\x1b[4;34;3ma" + e + "\x1b[4;34m" + e + " (u)"},
		{"not a link", "[a] (b) [c]", "[a] (b) [c]"},
		{"image", "![a cat](cat.png)", "[image: a cat]"},
		{"autolink", "<https://x.y/z> <me@x.y>", "\x1b[4;34mhttps://x.y/z" + e + " \x1b[4;34mme@x.y" + e},
		{"raw html", "a <br> b <span>c</span> 1 < 2", "a <br> b <span>c</span> 1 < 2"},
	}
	for _, c := range cases {
		if got := strings.TrimSuffix(Render(c.src, 200, true), "\n"); got != c.want {
			t.Errorf("%s: %q\n got %q\nwant %q", c.name, c.src, got, c.want)
		}
	}
}

// Whatever a model writes, the parser ends and the layout keeps to the
// width: broken and nested Markdown, long lines, control characters.
func TestParseAnything(t *testing.T) {
	inputs := []string{"", "\n\n", "[", "]", "[[[]]]((()))", "****", "*_*_*_", "`", "```", "> ", ">", "- ", "1.", "| |\n|-|",
		"<", "<>", "&", "&#;", "\\", "~~", strings.Repeat("> ", 200) + "deep", strings.Repeat("- ", 100) + "deep",
		strings.Repeat("*a ", 300), strings.Repeat("[x](", 200), "\x1b[31mred\x00", "\t\tx\n\t- y"}
	for _, in := range inputs {
		out := Render(in, 30, true)
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if Width(l) > 30 && !strings.Contains(in, "deep") {
				t.Errorf("%q: line %q is wider than 30", in, l)
			}
		}
	}
}
