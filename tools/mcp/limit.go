package mcp

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// maxMessage bounds one line of an HTTP server's answer: a JSON response
// body, or one line of an event stream. The MCP SDK bounds stdio lines and
// events (16 MiB) but reads a JSON response whole: a server answering a
// call with a gigabyte would have agentd hold it, several times over,
// before the result was cut to what the model reads. Beyond the bound the
// answer fails, and the call says why.
const maxMessage = 32 << 20

// limitResponses bounds what an HTTP server's answers may hold; tripped
// keeps the first overflow, for the call's error.
type limitResponses struct {
	next    http.RoundTripper
	tripped *overflow
}

func (l limitResponses) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &lineLimit{rc: resp.Body, max: maxMessage, tripped: l.tripped}
	}
	return resp, err
}

// overflow remembers that an answer was too large.
type overflow struct {
	mu  sync.Mutex
	err error
}

func (o *overflow) set(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		o.err = err
	}
}

// failed is the first overflow's error, or nil.
func (o *overflow) failed() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// lineLimit reads a body and fails once a line grows past max bytes.
type lineLimit struct {
	rc      io.ReadCloser
	max     int
	cur     int
	tripped *overflow
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.rc.Read(p)
	if i := bytes.LastIndexByte(p[:n], '\n'); i >= 0 {
		l.cur = n - i - 1
	} else {
		l.cur += n
	}
	if l.cur > l.max {
		e := fmt.Errorf("the server sent an answer larger than %d MiB, which agentd does not read", l.max>>20)
		l.tripped.set(e)
		return 0, e
	}
	return n, err
}

func (l *lineLimit) Close() error { return l.rc.Close() }
