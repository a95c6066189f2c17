// Command fakemodel serves a modeltest script as an OpenAI-compatible model,
// for the tests that cannot start one from Go: the Neovim and VS Code
// end-to-end tests run it as a process and point agentd at it.
//
//	fakemodel -script FILE [-addr 127.0.0.1:0] [-stdin-exit]
//
// When it is ready it prints exactly one line to stdout,
//
//	listening on http://127.0.0.1:PORT/v1
//
// and logs everything else to stderr. It exits on SIGINT or SIGTERM, or,
// with -stdin-exit, when its stdin closes, so that a test runner that dies
// without killing it does not leave it behind.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentd/agentd/agent/modeltest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "fakemodel: %v\n", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	flags.SetOutput(stderr)
	scriptPath := flags.String("script", "", "script file (JSON) to serve; required")
	addr := flags.String("addr", "127.0.0.1:0", "address to listen on")
	stdinExit := flags.Bool("stdin-exit", false, "exit when stdin closes")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *scriptPath == "" || flags.NArg() > 0 {
		flags.Usage()
		return errors.New("usage: fakemodel -script FILE [-addr 127.0.0.1:0] [-stdin-exit]")
	}
	script, err := modeltest.LoadScript(*scriptPath)
	if err != nil {
		return err
	}

	logger := log.New(stderr, "fakemodel: ", log.Ltime|log.Lmicroseconds)
	srv, err := modeltest.Listen(*addr, script, logger.Printf)
	if err != nil {
		return err
	}
	defer srv.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *stdinExit {
		go func() {
			// Whatever arrives on stdin is ignored; only its end matters.
			_, _ = io.Copy(io.Discard, stdin)
			logger.Printf("stdin closed")
			cancel()
		}()
	}

	if _, err := fmt.Fprintf(stdout, "listening on %s\n", srv.URL); err != nil {
		return fmt.Errorf("announce address: %w", err)
	}
	logger.Printf("serving %s (%d turns)", *scriptPath, len(script.Turns))
	<-ctx.Done()

	srv.Close()
	if unused := srv.Unused(); len(unused) > 0 {
		logger.Printf("turns never played: %v", unused)
	}
	if err := srv.Err(); err != nil {
		logger.Printf("unanswered requests: %v", err)
	}
	logger.Printf("exiting")
	return nil
}
