package termmd

import (
	"strings"
	"testing"
)

func TestRenderLayout(t *testing.T) {
	src := "# Title\n\nSome *emph* and **bold** with `code` and a [link](https://x.y/z).\n\n" +
		"- one\n- two\n  - nested\n\n3. third\n4. fourth\n\n> quoted\n\n```go\nfunc main() {\n\treturn\n}\n```\n\n---\n\n" +
		"| name | n |\n|------|--:|\n| a | 1 |\n| longer | 22 |\n\n- [x] done\n- [ ] todo\n\nA&amp;B \\*not emph\\*\n"
	want := strings.Join([]string{
		"# Title",
		"",
		"Some emph and bold with `code` and a link (https://x.y/z).",
		"",
		"• one",
		"• two",
		"  ◦ nested",
		"",
		"3. third",
		"4. fourth",
		"",
		"│ quoted",
		"",
		"  func main() {",
		"      return",
		"  }",
		"",
		"────────────────────────────────────────",
		"",
		"name   │  n",
		"───────┼───",
		"a      │  1",
		"longer │ 22",
		"",
		"• [x] done",
		"• [ ] todo",
		"",
		"A&B *not emph*",
	}, "\n") + "\n"
	if got := Render(src, 80, false); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderColour(t *testing.T) {
	got := Render("## Part\n\nSay **hi _there_** now.\n", 80, true)
	for _, want := range []string{
		"\x1b[1;35mPart\x1b[0m",
		// The nested style ends by going back to the outer one.
		"\x1b[1mhi \x1b[1;3mthere\x1b[0m\x1b[1m\x1b[0m now.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Render = %q, want it to contain %q", got, want)
		}
	}
}

// Lines break between words at the width; a style open at a break is
// closed at the end of the line and opened again on the next.
func TestWrap(t *testing.T) {
	got := Render("alpha beta **gamma delta epsilon** zeta", 20, true)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{
		"alpha beta \x1b[1mgamma\x1b[0m",
		"\x1b[1mdelta epsilon\x1b[0m zeta",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %q", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d = %q, want %q", i, lines[i], want[i])
		}
		if Width(lines[i]) > 20 {
			t.Errorf("line %d is %d wide", i, Width(lines[i]))
		}
	}
	// A word longer than the line is cut.
	long := Render(strings.Repeat("x", 45), 20, false)
	if long != strings.Repeat("x", 20)+"\n"+strings.Repeat("x", 20)+"\n"+strings.Repeat("x", 5)+"\n" {
		t.Errorf("long word: %q", long)
	}
}

func TestWidthAndTruncate(t *testing.T) {
	for s, w := range map[string]int{"abc": 3, "\x1b[1mabc\x1b[0m": 3, "日本": 4, "é": 1, "e\u0301": 1, "": 0} {
		if got := Width(s); got != w {
			t.Errorf("Width(%q) = %d, want %d", s, got, w)
		}
	}
	if got := Truncate("\x1b[2mhello world\x1b[0m", 8); got != "\x1b[2mhello w…\x1b[0m" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 8); got != "short" {
		t.Errorf("Truncate = %q", got)
	}
}

// Tables wider than the terminal wrap their widest cells.
func TestTableFitsTheWidth(t *testing.T) {
	src := "| key | what it does |\n|---|---|\n| a | " + strings.Repeat("long words ", 10) + "|\n"
	got := Render(src, 40, false)
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if Width(l) > 40 {
			t.Errorf("line %q is wider than 40", l)
		}
	}
	if !strings.Contains(got, "a   │ long words long words") {
		t.Errorf("table:\n%s", got)
	}
}

func TestHighlight(t *testing.T) {
	cases := []struct{ lang, code, want string }{
		{"go", "func f() string { return \"x\" } // c", "\x1b[35mfunc\x1b[0m \x1b[34mf\x1b[0m() \x1b[36mstring\x1b[0m { \x1b[35mreturn\x1b[0m \x1b[32m\"x\"\x1b[0m } \x1b[2m// c\x1b[0m"},
		{"bash", "echo $HOME # home", "\x1b[36mecho\x1b[0m \x1b[36m$HOME\x1b[0m \x1b[2m# home\x1b[0m"},
		{"sh", "curl a#b", "curl a#b"},
		{"python", "def f(): return None", "\x1b[35mdef\x1b[0m \x1b[34mf\x1b[0m(): \x1b[35mreturn\x1b[0m \x1b[36mNone\x1b[0m"},
		{"json", `{"a": 1, "b": true}`, "{\x1b[34m\"a\"\x1b[0m: \x1b[33m1\x1b[0m, \x1b[34m\"b\"\x1b[0m: \x1b[36mtrue\x1b[0m}"},
		{"diff", "-old\n+new", "\x1b[31m-old\x1b[0m\n\x1b[32m+new\x1b[0m"},
		{"brainfuck", "+-<>", "+-<>"},
	}
	for _, c := range cases {
		got := strings.Join(highlight(c.code, c.lang), "\n")
		if got != c.want {
			t.Errorf("%s: highlight(%q) =\n%q\nwant\n%q", c.lang, c.code, got, c.want)
		}
	}
	// Multi-line comments and strings keep their colour on every line.
	lines := highlight("/* a\nb */ x := `c\nd`", "go")
	if len(lines) != 3 || lines[1] != "\x1b[2mb */\x1b[0m x := \x1b[32m`c\x1b[0m" {
		t.Errorf("multi-line: %q", lines)
	}
}

func TestPlain(t *testing.T) {
	for in, want := range map[string]string{
		"\x1b[31mred\x1b[0m text":   "red text",
		"10%\r50%\r100%":            "100%",
		"done\r":                    "done",
		"a\tb\x07c\x1b]0;title\x07": "a\tbc",
	} {
		if got := Plain(in); got != want {
			t.Errorf("Plain(%q) = %q, want %q", in, got, want)
		}
	}
}
