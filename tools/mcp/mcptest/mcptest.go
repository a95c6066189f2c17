// Package mcptest gives agentd's tests real MCP servers: the small one
// built from tools/mcp/testdata/mcpserver, and the published npm packages
// (@modelcontextprotocol/server-everything, and the MCP Inspector, a
// client), installed once into a cache directory. It imports no MCP
// library: tests talk to the servers through agentd.
package mcptest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/testcache"
)

// The npm packages the tests run, at the versions they were written
// against; .ci/test installs them ahead (TestNPMPackages).
const (
	Everything = "@modelcontextprotocol/server-everything@2026.8.31"
	Inspector  = "@modelcontextprotocol/inspector@2.12.0"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// Server returns the test MCP server's binary, built once per test
// process into a directory of its own (which a sandboxed server must be
// allowed to read: it is the binary's directory).
func Server(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentd-mcpserver")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "mcpserver")
		out, err := exec.Command("go", "build", "-o", buildPath, "github.com/agentd/agentd/tools/mcp/testdata/mcpserver").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build mcpserver: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// StartHTTP runs the test server on streamable HTTP and returns its URL;
// the process is killed at the end of the test. env is added to its
// environment.
func StartHTTP(t testing.TB, env ...string) string {
	t.Helper()
	return StartHTTPAt(t, "127.0.0.1:0", env...)
}

// StartHTTPAt is StartHTTP on a given address, to start a server again
// where a client expects it.
func StartHTTPAt(t testing.TB, addr string, env ...string) string {
	t.Helper()
	return startListening(t, exec.Command(Server(t), "-http", addr), env, "listening on ")
}

// startListening starts cmd and waits for the line that gives its URL.
func startListening(t testing.TB, cmd *exec.Cmd, env []string, marker string) string {
	t.Helper()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), marker); i >= 0 {
				found <- strings.TrimSpace(sc.Text()[i+len(marker):])
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case u := <-found:
		return u
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not say %q within 30s", cmd.Path, marker)
	}
	return ""
}

// NPM returns the directory whose node_modules holds the npm packages,
// installing them the first time (internal/testcache: once, under a lock,
// whichever test binaries ask at once). It skips the test, saying why, when
// npm is missing or cannot reach the registry, unless
// AGENTD_TEST_REQUIRE_NPM=1 (.ci/test) makes that a failure too; any other
// failure fails it.
func NPM(t testing.TB) string {
	t.Helper()
	required := os.Getenv("AGENTD_TEST_REQUIRE_NPM") == "1"
	if _, err := exec.LookPath("npm"); err != nil {
		if required {
			t.Fatal("npm is not installed")
		}
		t.Skip("npm is not installed: the tests with published MCP servers need Node.js and npm (.ci/test installs them)")
	}
	dir, err := testcache.Ensure("mcp-npm", Everything+" "+Inspector, npmInstall)
	switch {
	case errors.Is(err, testcache.ErrSkip) && !required:
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	return dir
}

// npmInstall installs the packages into dir.
func npmInstall(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", dir, Everything, Inspector)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if unreachable(string(out)) {
			return fmt.Errorf("npm cannot reach the registry, so the published MCP servers %w: %s", testcache.ErrSkip, lastLine(string(out)))
		}
		return fmt.Errorf("npm install: %v\n%s", err, out)
	}
	if !installed(dir) {
		return fmt.Errorf("npm install did not install %s and %s into %s", Everything, Inspector, dir)
	}
	return nil
}

// installed reports whether both packages are there at their versions.
func installed(dir string) bool {
	for _, spec := range []string{Everything, Inspector} {
		name, want := splitSpec(spec)
		data, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil || !strings.Contains(string(data), `"version": "`+want+`"`) {
			return false
		}
	}
	return true
}

func splitSpec(spec string) (name, version string) {
	i := strings.LastIndex(spec, "@")
	return spec[:i], spec[i+1:]
}

func unreachable(out string) bool {
	for _, s := range []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ECONNRESET", "network", "proxy", "getaddrinfo", "EHOSTUNREACH", "ENETUNREACH"} {
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

// EverythingScript is the entry point of server-everything: run it as
// `node SCRIPT stdio` or `node SCRIPT streamableHttp` (PORT in the
// environment).
func EverythingScript(t testing.TB) string {
	t.Helper()
	name, _ := splitSpec(Everything)
	return filepath.Join(NPM(t), "node_modules", name, "dist", "index.js")
}

// StartEverythingHTTP runs server-everything on streamable HTTP on a free
// port and returns its URL.
func StartEverythingHTTP(t testing.TB) string {
	t.Helper()
	script := EverythingScript(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", script, "streamableHttp")
	u := startListening(t, cmd, []string{"PORT=" + port}, "listening on port ")
	if u == "" {
		t.Fatal("server-everything did not start")
	}
	return "http://127.0.0.1:" + port + "/mcp"
}

// InspectorCLI returns the MCP Inspector's launcher: run it as `node
// LAUNCHER --cli COMMAND ARGS... --method tools/list`.
func InspectorCLI(t testing.TB) string {
	t.Helper()
	name, _ := splitSpec(Inspector)
	p := filepath.Join(NPM(t), "node_modules", name, "clients", "launcher", "build", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the MCP Inspector's launcher is not where version %s keeps it: %v", Inspector, err)
	}
	return p
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}
