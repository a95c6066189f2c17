package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// verifyTimeout bounds the checks run after an edit: they are a hint to
// the model, not worth holding the turn for.
const verifyTimeout = 20 * time.Second

// verify reports what gofmt and go vet say about the Go files chs wrote,
// so the model sees errors it introduced. It returns "" when there is
// nothing to say or go is not installed.
func verify(ctx context.Context, env *Env, chs []fileChange) string {
	var files []string
	dirs := map[string]bool{}
	for _, c := range chs {
		if c.After == nil || !strings.HasSuffix(c.Abs, ".go") {
			continue
		}
		files = append(files, c.Abs)
		dirs[filepath.Dir(c.Abs)] = true
	}
	if len(files) == 0 {
		return ""
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ""
	}
	if !env.sandbox().Supports(ProfileRead) {
		return "\n\n(gofmt and go vet were not run: the kernel sandbox is not available to confine them)"
	}
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	var b strings.Builder
	b.WriteString("\n\n" + gofmtCheck(ctx, env, goBin, files))
	for _, d := range sortedKeys(dirs) {
		b.WriteString("\n" + vetCheck(ctx, env, goBin, d))
	}
	return strings.TrimRight(b.String(), "\n")
}

func gofmtCheck(ctx context.Context, env *Env, goBin string, files []string) string {
	gofmt := filepath.Join(filepath.Dir(goBin), "gofmt")
	if _, err := os.Stat(gofmt); err != nil {
		if gofmt, err = exec.LookPath("gofmt"); err != nil {
			return ""
		}
	}
	out, err := checkCmd(ctx, env, env.Root, gofmt, append([]string{"-l", "-e"}, files...)...)
	out = relativize(env.Root, out)
	switch {
	case strings.TrimSpace(out) == "" && err == nil:
		return "gofmt: ok"
	case err == nil:
		return "gofmt: not formatted: " + strings.Join(strings.Fields(out), " ")
	}
	return "gofmt reports:\n" + out
}

func vetCheck(ctx context.Context, env *Env, goBin, dir string) string {
	rel := relPath(env.Root, dir)
	if !hasGoMod(env.Root, dir) {
		return "go vet: skipped for " + rel + " (no go.mod)"
	}
	out, err := checkCmd(ctx, env, dir, goBin, "vet", ".")
	out = relativize(env.Root, out)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "go vet ./" + rel + ": timed out"
	}
	if err == nil && strings.TrimSpace(out) == "" {
		return "go vet ./" + rel + ": ok"
	}
	capped, _ := capOutput(out)
	return "go vet ./" + rel + " reports:\n" + strings.TrimRight(capped, "\n")
}

// hasGoMod reports whether a go.mod exists between dir and root.
func hasGoMod(root, dir string) bool {
	for d := dir; within(root, d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return true
		}
		if d == root {
			break
		}
	}
	return false
}

// checkCmd runs a check in the read profile without network: gofmt and
// go vet only read (go vet writes the confined commands' build cache).
// A failure to start, or a non-zero exit, is an error with the output.
func checkCmd(ctx context.Context, env *Env, dir, name string, args ...string) (string, error) {
	var out bytes.Buffer
	p, err := env.sandbox().Command(ctx, ProcSpec{Args: append([]string{name}, args...), Workspace: env.Root, Dir: dir,
		Confine: Confine{Profile: ProfileRead}, Stdout: &out, Stderr: &out, WaitDelay: time.Second, Started: env.Started})
	if err != nil {
		return "", err
	}
	if err := p.Wait(); err != nil {
		return out.String(), err
	}
	if code := p.ExitCode(); code != 0 {
		return out.String(), fmt.Errorf("exit status %d", code)
	}
	return out.String(), nil
}

func relativize(root, s string) string {
	return strings.ReplaceAll(s, root+string(filepath.Separator), "")
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
