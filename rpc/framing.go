package rpc

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

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd/agentd/rpc/wire"
)

// maxFrame bounds one message; a larger Content-Length is refused.
const maxFrame = 64 << 20

// framedConn is LSP framing (Content-Length headers) that survives bad input:
// jsonrpc2's own stream ends the connection on the first frame that does not
// parse, which would kill the daemon. Here a bad frame is answered with a
// parse or invalid-request error and reading goes on.
//
// Writes go through one goroutine with a buffered writer that flushes when
// the queue is empty, so bursts of notifications cost few system calls.
type framedConn struct {
	rc  io.ReadCloser
	in  *bufio.Reader
	out chan outFrame

	errMu sync.Mutex // guards err
	err   error
	// closeMu guards closed; senders hold it shared so Close cannot close
	// the queue under them, and a full queue blocks only senders.
	closeMu sync.RWMutex
	closed  bool
	done    chan struct{} // closed when the writer has drained
	onBad   func(error)   // told of each bad frame, for logs
	// onOrphan receives responses that cannot be routed (a null id).
	onOrphan func(body []byte)
}

func newFramedConn(rwc io.ReadWriteCloser, onBad func(error)) *framedConn {
	s := &framedConn{rc: rwc, in: bufio.NewReaderSize(rwc, 64*1024), out: make(chan outFrame, 4096), done: make(chan struct{}), onBad: onBad}
	go s.writeLoop(rwc)
	return s
}

func (s *framedConn) writeLoop(w io.Writer) {
	defer close(s.done)
	bw := bufio.NewWriterSize(w, 64*1024)
	for frame := range s.out {
		s.writeFrame(bw, frame)
		for more := true; more; {
			select {
			case f, ok := <-s.out:
				if !ok {
					more = false
					break
				}
				s.writeFrame(bw, f)
			default:
				more = false
			}
		}
		if err := bw.Flush(); err != nil {
			s.setErr(err)
		}
	}
	_ = bw.Flush()
}

// outFrame is a message body to frame, or (raw) bytes to write as they are.
type outFrame struct {
	body []byte
	raw  bool
}

func (s *framedConn) writeFrame(bw *bufio.Writer, f outFrame) {
	if s.failed() != nil {
		return
	}
	if !f.raw {
		bw.WriteString("Content-Length: ")
		bw.WriteString(strconv.Itoa(len(f.body)))
		bw.WriteString("\r\n\r\n")
	}
	if _, err := bw.Write(f.body); err != nil {
		s.setErr(err)
	}
}

func (s *framedConn) setErr(err error) {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

func (s *framedConn) failed() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// Write queues a message. It returns once the message is queued, in order.
func (s *framedConn) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("encoding message: %w", err)
	}
	return int64(len(data)), s.enqueue(outFrame{body: data})
}

func (s *framedConn) enqueue(f outFrame) error {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return errors.New("stream closed")
	}
	if err := s.failed(); err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	s.out <- f
	return nil
}

// Close stops reading and flushes what was queued.
func (s *framedConn) Close() error {
	s.closeMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.out)
	}
	s.closeMu.Unlock()
	<-s.done
	return s.rc.Close()
}

// Read returns the next valid message, answering bad frames on the way.
func (s *framedConn) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, err := s.readFrame()
		if err != nil {
			var bad badFrame
			if errors.As(err, &bad) {
				s.reject(nil, wire.CodeParseError, bad.Error())
				continue
			}
			return nil, 0, err
		}
		msg, err := decodeFrame(body)
		if err == nil {
			return msg, int64(len(body)), nil
		}
		var rej rejection
		if errors.As(err, &rej) {
			s.reject(rej.id, rej.code, rej.msg)
			continue
		}
		var orph orphan
		if errors.As(err, &orph) {
			if s.onOrphan != nil {
				s.onOrphan(orph.body)
			}
			continue
		}
		return nil, 0, err
	}
}

// badFrame is a framing error the reader recovered from.
type badFrame struct{ msg string }

func (b badFrame) Error() string { return b.msg }

func (s *framedConn) readFrame() ([]byte, error) {
	length := -1
	for {
		line, err := s.in.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if length >= 0 {
				break
			}
			continue // stray blank lines between frames
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, badFrame{fmt.Sprintf("parse error: header line %q has no colon", truncate(line, 80))}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 || n > maxFrame {
				return nil, badFrame{fmt.Sprintf("parse error: bad Content-Length %q", truncate(value, 40))}
			}
			length = n
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.in, body); err != nil {
		return nil, err
	}
	return body, nil
}

// rejection is a frame that decoded badly; the reply goes to id when known.
type rejection struct {
	id   json.RawMessage
	code int
	msg  string
}

func (r rejection) Error() string { return r.msg }

func decodeFrame(body []byte) (jsonrpc2.Message, error) {
	var probe struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, rejection{code: wire.CodeParseError, msg: "parse error: " + err.Error()}
	}
	if probe.Method == nil && (probe.Result != nil || probe.Error != nil) {
		// A response. It is never answered, whatever its shape: answering a
		// response with an error could make two peers argue forever.
		if msg, err := newResponse(probe.ID, probe.Result, probe.Error); err == nil && probe.JSONRPC == "2.0" {
			return msg, nil
		}
		return nil, orphan{body: body}
	}
	switch {
	case probe.JSONRPC != "2.0":
		return nil, rejection{id: validID(probe.ID), code: wire.CodeInvalidRequest, msg: `invalid request: "jsonrpc" must be "2.0"`}
	case probe.Method == nil:
		return nil, rejection{id: validID(probe.ID), code: wire.CodeInvalidRequest, msg: "invalid request: no method, and not a response"}
	case *probe.Method == "":
		return nil, rejection{id: validID(probe.ID), code: wire.CodeInvalidRequest, msg: "invalid request: empty method"}
	}
	msg, err := newRequest(probe.ID, *probe.Method, probe.Params)
	if err != nil {
		return nil, rejection{id: validID(probe.ID), code: wire.CodeInvalidRequest, msg: "invalid request: " + err.Error()}
	}
	return msg, nil
}

// newRequest and newResponse build the library's messages from the one
// decode above: jsonrpc2.DecodeMessage would decode the frame again with a
// fresh 32 KiB buffer per message, the main cost of a busy stream.
func newRequest(rawID json.RawMessage, method string, params json.RawMessage) (jsonrpc2.Message, error) {
	if len(params) == 0 {
		params = nil
	}
	if isNull(rawID) {
		return jsonrpc2.NewNotification(method, params)
	}
	var id jsonrpc2.ID
	if err := id.UnmarshalJSON(rawID); err != nil {
		return nil, fmt.Errorf("id must be a string or an integer: %w", err)
	}
	return jsonrpc2.NewCall(id, method, params)
}

func newResponse(rawID, result, rawErr json.RawMessage) (jsonrpc2.Message, error) {
	if isNull(rawID) {
		return nil, errors.New("null id")
	}
	var id jsonrpc2.ID
	if err := id.UnmarshalJSON(rawID); err != nil {
		return nil, err
	}
	if !isNull(rawErr) {
		var e jsonrpc2.Error
		if err := json.Unmarshal(rawErr, &e); err != nil {
			return nil, err
		}
		return jsonrpc2.NewResponse(id, nil, &e)
	}
	return jsonrpc2.NewResponse(id, result, nil)
}

// orphan is a response the connection cannot route (a null or broken id).
type orphan struct{ body []byte }

func (o orphan) Error() string { return "response without a usable id" }

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// validID keeps an id that can be echoed (a string or an integer).
func validID(raw json.RawMessage) json.RawMessage {
	if isNull(raw) {
		return nil
	}
	var s string
	var n int64
	if json.Unmarshal(raw, &s) == nil || json.Unmarshal(raw, &n) == nil {
		return raw
	}
	return nil
}

// reject answers a bad frame directly on the wire.
func (s *framedConn) reject(id json.RawMessage, code int, msg string) {
	if s.onBad != nil {
		s.onBad(errors.New(msg))
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	var buf bytes.Buffer
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"error":`)
	e, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	buf.Write(e)
	buf.WriteString("}")
	_ = s.enqueue(outFrame{body: buf.Bytes()})
}

// writeRaw queues bytes to write unframed, for tests that send bad input.
func (s *framedConn) writeRaw(b []byte) error { return s.enqueue(outFrame{body: b, raw: true}) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
