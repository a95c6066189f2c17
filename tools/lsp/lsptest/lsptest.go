// Package lsptest installs the real language servers the tests run, at the
// versions they were written against, into the tests' cache
// (internal/testcache: once, under a lock, whichever test binaries ask at
// once): gopls from the Go module proxy, typescript-language-server with
// typescript and pyright from npm.
package lsptest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testcache"
)

// The servers and their versions. gopls v0.23.0 is the newest that builds
// with go1.26; typescript-language-server 5.x the newest that runs on
// Node 20 (6.x needs Node 22); typescript 5.9 the last with tsserver.
const (
	Gopls      = "golang.org/x/tools/gopls@v0.23.0"
	TSServer   = "typescript-language-server@5.3.0"
	TypeScript = "typescript@5.9.3"
	Pyright    = "pyright@1.1.414"
)

// RequireEnv, set to 1 (.ci/test), makes a server that cannot be installed
// fail the test instead of skipping it.
const RequireEnv = "AGENTD_TEST_REQUIRE_LSP"

// Servers are the installed servers.
type Servers struct {
	// GoBin holds gopls; NodeBin typescript-language-server, tsserver and
	// pyright-langserver.
	GoBin, NodeBin string
}

// PATH is path with the servers' directories first.
func (s Servers) PATH(path string) string {
	return s.GoBin + string(os.PathListSeparator) + s.NodeBin + string(os.PathListSeparator) + path
}

// Gopls, TSServer and Pyright are the servers' programs.
func (s Servers) GoplsPath() string    { return filepath.Join(s.GoBin, "gopls") }
func (s Servers) TSServerPath() string { return filepath.Join(s.NodeBin, "typescript-language-server") }
func (s Servers) PyrightPath() string  { return filepath.Join(s.NodeBin, "pyright-langserver") }

// Install returns the servers, installing them the first time. It skips
// the test, saying why, when go or npm is missing or cannot reach its
// registry, unless RequireEnv makes that a failure too; any other failure
// fails it.
func Install(t testing.TB) Servers {
	t.Helper()
	s, err := Ensure()
	switch {
	case errors.Is(err, testcache.ErrSkip) && os.Getenv(RequireEnv) != "1":
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	return s
}

// Ensure installs the servers if they are not yet.
func Ensure() (Servers, error) {
	goDir, err := testcache.Ensure("gopls", Gopls, installGopls)
	if err != nil {
		return Servers{}, err
	}
	npmDir, err := testcache.Ensure("lsp-npm", TSServer+" "+TypeScript+" "+Pyright, installNPM)
	if err != nil {
		return Servers{}, err
	}
	return Servers{GoBin: goDir, NodeBin: filepath.Join(npmDir, "node_modules", ".bin")}, nil
}

func installGopls(dir string) error {
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("gopls %w: go is not installed (.ci/test installs it)", testcache.ErrSkip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", Gopls)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if unreachable(string(out)) {
			return fmt.Errorf("the Go module proxy cannot be reached, so gopls %w: %s", testcache.ErrSkip, lastLine(string(out)))
		}
		return fmt.Errorf("go install %s: %v\n%s", Gopls, err, out)
	}
	return nil
}

func installNPM(dir string) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("typescript-language-server and pyright %w: npm is not installed (.ci/test installs Node.js and npm)", testcache.ErrSkip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, TSServer, TypeScript, Pyright)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if unreachable(string(out)) {
			return fmt.Errorf("npm cannot reach the registry, so the language servers %w: %s", testcache.ErrSkip, lastLine(string(out)))
		}
		return fmt.Errorf("npm install: %v\n%s", err, out)
	}
	for _, spec := range []string{TSServer, TypeScript, Pyright} {
		i := strings.LastIndex(spec, "@")
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", spec[:i], "package.json"))
		if err != nil || !strings.Contains(string(data), `"version": "`+spec[i+1:]+`"`) {
			return fmt.Errorf("npm install did not install %s into %s", spec, dir)
		}
	}
	return nil
}

func unreachable(out string) bool {
	for _, s := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "dial tcp", "proxy", "getaddrinfo", "EHOSTUNREACH", "ENETUNREACH", "no such host"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
