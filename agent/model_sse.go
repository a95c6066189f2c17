package agent

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Bounds on what a model may send, checked before anything grows: a hostile
// or broken endpoint gets a model error, never the daemon's memory.
const (
	// maxLineBytes bounds one server-sent event line, i.e. one chunk. A
	// provider that sends a whole tool call in one chunk needs room for a
	// large file's content.
	maxLineBytes = 16 << 20
	// maxArgsBytes bounds one tool call's arguments.
	maxArgsBytes = 8 << 20
	// maxReplyBytes bounds text, reasoning and arguments together.
	maxReplyBytes = 32 << 20
	// maxToolCalls bounds the calls of one reply; a streamed index is
	// checked against it before any slot is allocated.
	maxToolCalls = 64
)

var (
	errLineTooLong = errors.New("line too long")
	// errCutMidLine is a stream that ended inside an event.
	errCutMidLine = errors.New("stream ended in the middle of a line")
)

var (
	dataField = []byte("data:")
	doneEvent = []byte("[DONE]")
)

// sseReader reads the data lines of a server-sent event stream. Each data
// line is taken as one event, as every OpenAI-compatible server sends them
// (one JSON chunk a line), which spares joining lines; comments (keep-alive
// lines such as ": OPENROUTER PROCESSING"), blank lines and the event, id
// and retry fields carry nothing a chat completion needs.
type sseReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, assembled
	// bulk is called for each buffer's worth of a long line: a large chunk
	// arriving is progress, though no event has completed yet.
	bulk func()
}

func newSSEReader(r io.Reader, bulk func()) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10), bulk: bulk}
}

// next returns the payload of the next data line, valid until the next
// call; io.EOF when the stream ends at a line boundary.
func (s *sseReader) next() ([]byte, error) {
	for {
		line, err := s.line()
		if err != nil {
			return nil, err
		}
		if !bytes.HasPrefix(line, dataField) {
			continue
		}
		payload := line[len(dataField):]
		if len(payload) > 0 && payload[0] == ' ' {
			payload = payload[1:]
		}
		return payload, nil
	}
}

// line returns the next line without its end (\n or \r\n). A last line
// with no end is returned only if it is a complete [DONE]: anything else
// was cut off.
func (s *sseReader) line() ([]byte, error) {
	s.long = s.long[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		switch {
		case err == nil:
			if len(s.long) > 0 {
				if len(s.long)+len(frag) > maxLineBytes {
					return nil, errLineTooLong
				}
				s.long = append(s.long, frag...)
				frag = s.long
			}
			return trimEOL(frag), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(s.long)+len(frag) > maxLineBytes {
				return nil, errLineTooLong
			}
			s.long = append(s.long, frag...)
			s.bulk()
		case errors.Is(err, io.EOF):
			rest := append(s.long, frag...)
			if len(bytes.TrimSpace(rest)) == 0 {
				return nil, io.EOF
			}
			if bytes.Equal(bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(rest), dataField)), doneEvent) {
				return []byte("data: [DONE]"), nil
			}
			return nil, errCutMidLine
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
