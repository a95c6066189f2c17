package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// conn is JSON-RPC 2.0 over LSP's framing with a server process: calls
// bounded by their context, notifications both ways, and the server's own
// requests answered by a handler. Writes go through one goroutine, so a
// server that stops reading blocks no caller past its context.
type conn struct {
	w     io.WriteCloser
	queue chan []byte

	mu      sync.Mutex // guards pending, nextID, err
	pending map[int64]chan response
	nextID  int64
	err     error // why the connection ended

	onNotify  func(method string, params json.RawMessage)
	onRequest func(method string, params json.RawMessage) (any, error)
	done      chan struct{} // closed when reading ended
}

// maxFrame bounds one message from a server (a huge references list fits).
const maxFrame = 64 << 20

type response struct {
	result json.RawMessage
	err    error
}

// rpcError is a JSON-RPC error a server answered.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// codeMethodNotFound answers a request this client does not serve.
const codeMethodNotFound = -32601

// newConn speaks on r and w and starts reading.
func newConn(r io.Reader, w io.WriteCloser, onNotify func(string, json.RawMessage), onRequest func(string, json.RawMessage) (any, error)) *conn {
	c := &conn{w: w, queue: make(chan []byte, 256), pending: map[int64]chan response{}, onNotify: onNotify,
		onRequest: onRequest, done: make(chan struct{})}
	go c.writeLoop()
	go c.readLoop(r)
	return c
}

func (c *conn) writeLoop() {
	bw := bufio.NewWriter(c.w)
	for {
		select {
		case body := <-c.queue:
			fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", len(body))
			bw.Write(body)
			for more := true; more; {
				select {
				case b := <-c.queue:
					fmt.Fprintf(bw, "Content-Length: %d\r\n\r\n", len(b))
					bw.Write(b)
				default:
					more = false
				}
			}
			if err := bw.Flush(); err != nil {
				c.fail(fmt.Errorf("writing to the server: %w", err))
				return
			}
		case <-c.done:
			return
		}
	}
}

// send queues a message, waiting while the queue is full until ctx ends.
func (c *conn) send(ctx context.Context, msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	select {
	case c.queue <- body:
		return nil
	case <-c.done:
		return c.ended()
	case <-ctx.Done():
		return fmt.Errorf("the server is not reading: %w", ctx.Err())
	}
}

// call sends a request and decodes its result into out (may be nil). When
// ctx ends first, the server is told with $/cancelRequest.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.nextID++
	id := c.nextID
	ch := make(chan response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := c.send(ctx, msg); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if out == nil || len(r.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.result, out); err != nil {
			return fmt.Errorf("the server's answer to %s does not decode: %w", method, err)
		}
		return nil
	case <-c.done:
		return c.ended()
	case <-ctx.Done():
		_ = c.notify(context.Background(), "$/cancelRequest", map[string]any{"id": id})
		return ctx.Err()
	}
}

// notify sends a notification.
func (c *conn) notify(ctx context.Context, method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.send(ctx, msg)
}

func (c *conn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		body, err := readFrame(br)
		if err != nil {
			c.fail(err)
			return
		}
		c.dispatch(body)
	}
}

// readFrame reads one Content-Length framed body.
func readFrame(br *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("reading from the server: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if length >= 0 {
				break
			}
			continue // stray blank lines between frames
		}
		name, value, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxFrame {
				return nil, fmt.Errorf("the server sent a bad Content-Length: %q", value)
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("reading from the server: %w", err)
	}
	return body, nil
}

// message is any JSON-RPC message, as read.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

func (c *conn) dispatch(body []byte) {
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		return // not JSON: a server's stray output; the next frame may be fine
	}
	hasID := len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
	switch {
	case m.Method != "" && hasID:
		go c.answer(m)
	case m.Method != "":
		if c.onNotify != nil {
			c.onNotify(m.Method, m.Params)
		}
	case hasID:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return // not one of ours
		}
		c.mu.Lock()
		ch := c.pending[id]
		c.mu.Unlock()
		if ch == nil {
			return // answered after its caller gave up
		}
		if m.Error != nil {
			ch <- response{err: m.Error}
		} else {
			ch <- response{result: m.Result}
		}
	}
}

// answer replies to a request from the server.
func (c *conn) answer(m message) {
	var result any
	var err error
	if c.onRequest != nil {
		result, err = c.onRequest(m.Method, m.Params)
	} else {
		err = &rpcError{Code: codeMethodNotFound, Message: "method not found: " + m.Method}
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		reply["error"] = re
	case err != nil:
		reply["error"] = &rpcError{Code: -32603, Message: err.Error()}
	default:
		reply["result"] = result
	}
	_ = c.send(context.Background(), reply)
}

// fail ends the connection with err; pending calls return it.
func (c *conn) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its output")
	}
	c.err = err
	close(c.done)
}

func (c *conn) ended() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close stops the connection: the server's input is closed.
func (c *conn) close() {
	c.fail(errors.New("the connection was closed"))
	_ = c.w.Close()
}
