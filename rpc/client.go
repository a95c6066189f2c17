package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.lsp.dev/jsonrpc2"
)

// Client is the editor's end of the wire, for tests and tools: it frames and
// sends requests and hands every message from the daemon to a callback.
type Client struct {
	conn   jsonrpc2.Conn
	stream *stream
}

// CallError is a JSON-RPC error answer.
type CallError struct {
	Code    int
	Message string
}

func (e *CallError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// NewClient speaks the protocol on rwc. onMessage receives each notification
// and each request from the daemon (window/workDoneProgress/create, answered
// with null), in the order they arrive; it must not block.
func NewClient(ctx context.Context, rwc io.ReadWriteCloser, onMessage func(method string, params json.RawMessage)) *Client {
	st := newStream(rwc, nil)
	conn := jsonrpc2.NewConn(st)
	conn.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if onMessage != nil {
			onMessage(req.Method(), req.Params())
		}
		return reply(ctx, nil, nil)
	})
	return &Client{conn: conn, stream: st}
}

// Call sends a request and decodes its result into result (may be nil). An
// error answer comes back as *CallError.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, err := c.conn.Call(ctx, method, params, result)
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		return &CallError{Code: int(we.Code), Message: we.Message}
	}
	return err
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// SendRaw writes bytes as they are, for tests of malformed input.
func (c *Client) SendRaw(b []byte) error { return c.stream.writeRaw(b) }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }
