package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/tools"
)

// dangerCores run code, write outside or destroy: wrapped in any shell
// context, a line holding one is never read-only.
var dangerCores = []string{
	`LESSOPEN='|id' less f`, `GIT_EXTERNAL_DIFF=x git diff`, `export PAGER=x; git log`, `git -c core.pager=x log`,
	`git grep -Ox y`, `rg --pre x y`, `go vet -toolexec x ./...`, `sort -o out f`, `uniq a b`, `xxd a b`,
	`gofmt -cpuprofile p a.go`, `date -s now`, `hostname x`, `tee f`, `sed -i s/a/b/ f`, `awk 'BEGIN{system("id")}'`,
	`find . -delete`, `find . -exec id ';'`, `less +!id f`, `x='a[$(id)]'; echo $((x))`, `test -v 'a[$(id)]'`,
	`$X`, `bash`, `sh -c id`, `echo hi > f`, `cat /proc/1/environ`, `xargs id`, `eval id`, `. ./x`, `make`,
	`printf -v x y`, `declare x=1`, `cd x; echo > y`, `ln -s / l`, `PATH=/tmp ls`, `git log --output=x`,
	`git status; git commit -m x`, `curl x`, `go list -m -u all`,
}

// denialCores trip a built-in denial: wrapped, the line is refused, or at
// least asks in every mode.
var denialCores = []string{
	`rm -rf /`, `rm -rf ~`, `\rm -rf /`, `sudo id`, `:(){ :|:& };:`, `curl x | sh`, `cd / && rm -rf *`,
	`echo / | xargs rm -rf`, `find / -delete`, `mkfs.ext4 /dev/sda`, `dd if=/dev/zero of=/dev/sda`, `reboot`,
	`chmod -R 777 /`, `echo x > /etc/passwd`, `ln -s / l && rm -rf l/`,
}

// shellContexts put a command (%) where it still runs.
var shellContexts = []string{
	"%", "{ %; }; ls", "ls; %", "ls && { %; }", "false || { %; }", "ls | { %; }", "{ %; } | cat", "( % )", "{ %; }",
	"echo $( % )", "echo `B`", "if true; then %; fi", "if false; then ls; else %; fi", "for i in 1 2; do %; done",
	"while true; do %; break; done", "case x in x) %;; esac", "f() { %; }; f", "timeout 5 bash -c 'Q'",
	"nice sh -c 'Q'", "command bash -c 'Q'", "time { %; }", "env bash -c 'Q'", "! { %; }", "{ %; } &",
	"{ %; } 2>/dev/null", "cat <( % )", "eval 'Q'", "bash -c 'Q'", "sh -c -- 'Q'", "bash <<< 'Q'", "echo 'Q' | bash",
	"x=$( % ); echo $x",
}

// wrapCommand builds a line from a core and context choices.
func wrapCommand(core string, picks []byte) string {
	line := core
	for _, b := range picks {
		ctx := shellContexts[int(b)%len(shellContexts)]
		switch {
		case strings.Contains(ctx, "B"): // inside backquotes, \ and ` are escaped
			line = strings.Replace(ctx, "B", strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(line), 1)
		case strings.Contains(ctx, "Q"):
			line = strings.Replace(ctx, "Q", strings.ReplaceAll(line, "'", `'\''`), 1)
		default:
			line = strings.Replace(ctx, "%", line, 1)
		}
	}
	return line
}

// FuzzShellAnalysis: the analysis never panics on any input, its verdict
// is coherent, and no wrapping hides a dangerous command: a line holding
// one is never read-only, and one holding a built-in denial never runs
// unasked.
func FuzzShellAnalysis(f *testing.F) {
	for _, h := range hostileLines {
		f.Add(h.line, uint8(0), []byte{})
	}
	for i := range shellContexts {
		f.Add("", uint8(i), []byte{byte(i), byte(i * 7)})
	}
	root := f.TempDir()
	p, err := Load(Config{Mode: tools.ModeAsk, Root: root})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string, core uint8, picks []byte) {
		if len(raw) > 4096 || len(picks) > 6 {
			return
		}
		cls := p.Classify(&tools.Command{Line: raw, Cwd: "."})
		if cls.ReadOnly && (cls.Denied != "" || len(cls.Unchecked) > 0 || cls.Exec == "" || cls.ParseErr != nil) {
			t.Fatalf("incoherent verdict for %q: %+v", raw, cls)
		}
		for _, mode := range tools.Modes {
			p.Decide("s", mode, &tools.Call{Tool: tools.RunCmdToolName, Effect: tools.EffectExecute, Command: &tools.Command{Line: raw, Cwd: "."}})
		}

		d := dangerCores[int(core)%len(dangerCores)]
		line := wrapCommand(d, picks)
		if c := p.Classify(&tools.Command{Line: line, Cwd: "."}); c.ReadOnly {
			t.Fatalf("%q (holding %q) judged read-only", line, d)
		}
		den := denialCores[int(core)%len(denialCores)]
		line = wrapCommand(den, picks)
		v := p.Decide("s", tools.ModeFullAuto, &tools.Call{Tool: tools.RunCmdToolName, Effect: tools.EffectExecute, Command: &tools.Command{Line: line, Cwd: "."}})
		if v.Action == Allow {
			t.Fatalf("%q (holding %q) allowed in full-auto: %+v", line, den, v)
		}
	})
}

// BenchmarkClassify times the analysis of typical lines and of a line
// built to make it work hard (many functions calling each other).
func BenchmarkClassify(b *testing.B) {
	var funcs strings.Builder
	for i := range 60 {
		fmt.Fprintf(&funcs, "f%d() { cd sub; f%d; ls; }; ", i, i+1)
	}
	funcs.WriteString("f0")
	lines := map[string]string{
		"simple":   "git status",
		"pipeline": `find . -name '*.go' -print0 | xargs -0 grep -n TODO | sort | head -20`,
		"script":   `cd sub && for f in *.go; do sed -n '1,5p' "$f"; done; git log -p -1 -- a.go | cat`,
		"denial":   `bash -c 'cd / && eval "rm -rf *"'`,
		"funcs":    funcs.String(),
	}
	root := b.TempDir()
	p, err := Load(Config{Mode: tools.ModeAsk, Root: root})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"simple", "pipeline", "script", "denial", "funcs"} {
		b.Run(name, func(b *testing.B) {
			c := &tools.Command{Line: lines[name], Cwd: "."}
			for b.Loop() {
				p.Classify(c)
			}
		})
	}
}
