package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Client is the editor's end of the wire, for tests and tools: it frames and
// sends requests and hands every message from the daemon to a callback.
type Client struct {
	conn   jsonrpc2.Conn
	framed *framedConn

	mu       sync.Mutex // guards handlers
	handlers map[string]RequestHandler
}

// RequestHandler answers a request from the daemon: its result, or an
// error (a *CallError keeps its code).
type RequestHandler func(ctx context.Context, params json.RawMessage) (any, error)

// Handle answers the daemon's requests of method with h (in its own
// goroutine, so h may take its time), instead of with null. onMessage
// still sees each request first.
func (c *Client) Handle(method string, h RequestHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.handlers[method] = h
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
	st := newFramedConn(rwc, nil)
	if onMessage != nil {
		st.onOrphan = func(body []byte) { onMessage(MethodForeignResponse, body) }
	}
	conn := jsonrpc2.NewConn(observer{st, onMessage})
	c := &Client{conn: conn, framed: st, handlers: map[string]RequestHandler{}}
	conn.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if onMessage != nil {
			onMessage(req.Method(), req.Params())
		}
		c.mu.Lock()
		h := c.handlers[req.Method()]
		c.mu.Unlock()
		if _, isCall := req.(*jsonrpc2.Call); !isCall || h == nil {
			return reply(ctx, nil, nil)
		}
		go func() {
			res, err := h(ctx, req.Params())
			var ce *CallError
			if errors.As(err, &ce) {
				err = &jsonrpc2.Error{Code: jsonrpc2.Code(ce.Code), Message: ce.Message}
			}
			_ = reply(context.WithoutCancel(ctx), res, err)
		}()
		return nil
	})
	return c
}

// MethodForeignResponse is the pseudo-method under which a Client reports an
// answer to something it did not send as a call: the null-id error for a
// frame that did not parse, or the answer to a raw frame (string ids).
const MethodForeignResponse = "rpc/response"

// observer reports foreign responses before the connection drops them; the
// client's own calls always have number ids from 1.
type observer struct {
	*framedConn
	on func(string, json.RawMessage)
}

func (o observer) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	msg, n, err := o.framedConn.Read(ctx)
	if resp, ok := msg.(*jsonrpc2.Response); ok && o.on != nil {
		if id := fmt.Sprintf("%q", resp.ID()); id == "#0" || strings.HasPrefix(id, `"`) {
			data, _ := json.Marshal(resp)
			o.on(MethodForeignResponse, data)
		}
	}
	return msg, n, err
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
func (c *Client) SendRaw(b []byte) error { return c.framed.writeRaw(b) }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }
