package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// buildFakemodel compiles the binary once per test, as the editor tests will
// run it: a separate process that knows only its flags.
func buildFakemodel(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "fakemodel")
	out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

var listeningLine = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:\d+/v1)\n$`)

// startProcess runs the binary and returns the base URL it announced and
// what it writes to stdout after that, once stdout closes.
func startProcess(t *testing.T, cmd *exec.Cmd) (string, <-chan []byte) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("fakemodel stderr:\n%s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	rest := make(chan []byte, 1)
	go func() {
		// Read to the end before Wait, which closes the pipe.
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		b, _ := io.ReadAll(r)
		rest <- b
	}()
	select {
	case line := <-lines:
		m := listeningLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q, want %q", line, "listening on http://127.0.0.1:PORT/v1")
		}
		return m[1], rest
	case <-time.After(10 * time.Second):
		t.Fatal("no listening line within 10s")
	}
	return "", nil
}

// waitExit waits for the process to end and checks it said nothing more on
// stdout than the listening line.
func waitExit(t *testing.T, cmd *exec.Cmd, rest <-chan []byte) {
	t.Helper()
	select {
	case b := <-rest:
		if len(b) != 0 {
			t.Errorf("more stdout: %q", b)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("fakemodel did not exit")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v", err)
	}
}

func TestProcessServesScript(t *testing.T) {
	bin := buildFakemodel(t)
	cmd := exec.Command(bin, "-script", "../../testdata/models/plain_text.json", "-stdin-exit")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("stdin pipe: %v", err)
	}
	url, rest := startProcess(t, cmd)

	cfg := openai.DefaultConfig("key")
	cfg.BaseURL = url
	c := openai.NewClientWithConfig(cfg)
	stream, err := c.CreateChatCompletionStream(t.Context(), openai.ChatCompletionRequest{
		Model:    "fake",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}},
	})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	var text string
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		text += chunk.Choices[0].Delta.Content
	}
	stream.Close()
	if !strings.HasPrefix(text, "Hi!") {
		t.Errorf("text %q", text)
	}

	resp, err := http.Get(strings.TrimSuffix(url, "/v1") + "/_unused")
	if err != nil {
		t.Fatalf("get unused: %v", err)
	}
	var unused []string
	err = json.NewDecoder(resp.Body).Decode(&unused)
	resp.Body.Close()
	if err != nil || len(unused) != 0 {
		t.Errorf("unused %v, %v", unused, err)
	}

	// Closing stdin is how an editor test that dies takes fakemodel with it.
	stdin.Close()
	waitExit(t, cmd, rest)
}

func TestProcessExitsOnSIGTERM(t *testing.T) {
	bin := buildFakemodel(t)
	cmd := exec.Command(bin, "-script", "../../testdata/models/ask_user.json", "-addr", "127.0.0.1:0")
	_, rest := startProcess(t, cmd)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal: %v", err)
	}
	waitExit(t, cmd, rest)
}

func TestBadScript(t *testing.T) {
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"-script", filepath.Join(t.TempDir(), "missing.json")}, strings.NewReader(""), &stdout, &stderr)
	if err == nil || stdout.Len() != 0 {
		t.Errorf("missing script: err %v, stdout %q", err, stdout.String())
	}
	if err := run(t.Context(), nil, strings.NewReader(""), &stdout, &stderr); err == nil {
		t.Error("no -script: no error")
	}
}
