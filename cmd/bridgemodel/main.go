// Command bridgemodel lets a person (or another program) play the model for
// agentd: it serves an OpenAI-compatible endpoint that writes each request
// agentd sends to a file and answers with the reply someone writes next to it.
//
//	bridgemodel -dir DIR [-addr 127.0.0.1:0] [-poll 200ms]
//
// Request N (from 001) is written, exactly as received but indented, to
// DIR/NNN.request.json; the bridge then waits for DIR/NNN.reply.json, which
// holds text, tool calls, or both:
//
//	{"content": "Done: the bug was an off-by-one."}
//	{"tool_calls": [{"name": "read_file", "arguments": {"path": "list.go"}}]}
//
// Arguments are an object, or a string sent as it is (to play a model that
// writes broken JSON). Write the reply to a temporary name and rename it, so
// the bridge never reads half a file; a reply that does not parse is renamed
// to NNN.reply.json.bad, logged, and waited for again. The reply goes back in
// the wire format (a stream of chunks, tool-call deltas with ids, the finish
// reason, usage when asked for, [DONE]; or one JSON body).
//
// While it waits the bridge sends nothing: agentd's stream idle timeout does
// not count keep-alive comments, so run agentd with AGENTD_STREAM_IDLE_TIMEOUT
// and AGENTD_MODEL_TIMEOUT longer than you need to think (e.g. 24h).
//
// When it is ready it prints "listening on http://127.0.0.1:PORT/v1" to
// stdout and logs the rest to stderr. GET /v1/models lists one model,
// "bridge". It exits on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "bridgemodel: %v\n", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("bridgemodel", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dir := flags.String("dir", "", "directory for NNN.request.json and NNN.reply.json; required")
	addr := flags.String("addr", "127.0.0.1:0", "address to listen on")
	poll := flags.Duration("poll", 200*time.Millisecond, "how often to look for a reply file")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *dir == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("usage: bridgemodel -dir DIR [-addr 127.0.0.1:0] [-poll 200ms]")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	logger := log.New(stderr, "bridgemodel: ", log.Ltime)
	b := &bridge{dir: *dir, poll: *poll, logf: logger.Printf}
	srv := &http.Server{Handler: b.handler()}
	go func() { _ = srv.Serve(ln) }()
	if _, err := fmt.Fprintf(stdout, "listening on http://%s/v1\n", ln.Addr()); err != nil {
		return fmt.Errorf("announce address: %w", err)
	}
	logger.Printf("requests and replies in %s", *dir)
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	return nil
}
