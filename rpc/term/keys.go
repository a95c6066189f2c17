package term

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"
)

// keyKind is what a key press is.
type keyKind int

const (
	keyRune keyKind = iota
	keyEnter
	keyBackspace
	keyUp
	keyDown
	keyLeft
	keyRight
	keyEsc
	keyTab
	keyCtrlC
	keyCtrlD
	keyCtrlU
	keyCtrlW
	keyCtrlK
	keyHome
	keyEnd
	keyDelete
	keyOther
)

// key is one key press and when it was read.
type key struct {
	kind keyKind
	r    rune
	at   time.Time
}

// errKeyboardClosed ends a wait for a key: the terminal went away.
var errKeyboardClosed = errors.New("the terminal closed")

// keyboard reads the user's keys for the prompts. For the whole run the
// terminal is in a mode without echo or line editing (signals stay on, so
// Ctrl-C is still SIGINT): keys typed while the agent works neither show on
// the screen nor wait in a line buffer. They are read as they come and
// stamped; a prompt, once what it asks about is on the screen, discards
// every key read before (and the kernel's queue, tcflush), so only a key
// typed after the user could see the question answers it.
type keyboard struct {
	fd    int
	saved *termios

	mu     sync.Mutex // guards keys, cutoff, err
	keys   []key
	cutoff time.Time
	err    error
	ready  chan struct{} // a key arrived (1-buffered)
}

// openKeyboard puts the terminal f in quiet mode and starts reading it.
// The reading goroutine blocks in read(2) until the process exits.
func openKeyboard(f *os.File) (*keyboard, error) {
	fd := int(f.Fd())
	saved, err := getTermios(fd)
	if err != nil {
		return nil, err
	}
	if err := setTermios(fd, quiet(saved)); err != nil {
		return nil, err
	}
	k := &keyboard{fd: fd, saved: saved, ready: make(chan struct{}, 1)}
	go k.read(f)
	return k, nil
}

// restore gives the terminal back its modes.
func (k *keyboard) restore() { _ = setTermios(k.fd, k.saved) }

// quietAgain puts the terminal back in quiet mode (after Ctrl-Z and fg).
func (k *keyboard) quietAgain() { _ = setTermios(k.fd, quiet(k.saved)) }

func (k *keyboard) read(r io.Reader) {
	buf := make([]byte, 256)
	var pending []byte
	for {
		n, err := r.Read(buf)
		at := time.Now()
		pending = append(pending, buf[:n]...)
		keys, rest := parseKeys(pending, at)
		pending = append(pending[:0], rest...)
		k.mu.Lock()
		k.keys = append(k.keys, keys...)
		if err != nil {
			k.err = errKeyboardClosed
		}
		k.mu.Unlock()
		select {
		case k.ready <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// discard drops every key typed until now, read or not. A prompt calls it
// once what it asks about is on the screen and just before it draws its
// answers: no key typed before can answer it.
func (k *keyboard) discard() {
	k.mu.Lock()
	defer k.mu.Unlock()
	_ = flushInput(k.fd)
	k.cutoff = time.Now()
	k.keys = nil
}

// next waits for the next key typed after the last discard; it gives up
// when done is closed (errPromptClosed).
func (k *keyboard) next(done <-chan struct{}) (key, error) {
	for {
		k.mu.Lock()
		for len(k.keys) > 0 {
			ky := k.keys[0]
			k.keys = k.keys[1:]
			if !ky.at.Before(k.cutoff) {
				k.mu.Unlock()
				return ky, nil
			}
		}
		err := k.err
		k.mu.Unlock()
		if err != nil {
			return key{}, err
		}
		select {
		case <-k.ready:
		case <-done:
			return key{}, errPromptClosed
		}
	}
}

// controlKeys are the single control bytes a prompt knows: the editing
// keys (Ctrl-A/E/B/F are Home, End, ←, → as in a shell), Tab, Ctrl-C, Ctrl-D.
var controlKeys = map[byte]keyKind{
	0x7f: keyBackspace, 0x08: keyBackspace, '\t': keyTab, 0x03: keyCtrlC, 0x04: keyCtrlD,
	0x15: keyCtrlU, 0x17: keyCtrlW, 0x0b: keyCtrlK, 0x01: keyHome, 0x05: keyEnd, 0x02: keyLeft, 0x06: keyRight,
}

// finalKeys name a CSI or SS3 sequence by its final byte.
var finalKeys = map[byte]keyKind{'A': keyUp, 'B': keyDown, 'C': keyRight, 'D': keyLeft, 'H': keyHome, 'F': keyEnd}

// parseKeys splits what the terminal sent into keys; an incomplete UTF-8
// sequence at the end is left for the next read.
func parseKeys(b []byte, at time.Time) ([]key, []byte) {
	var keys []key
	for len(b) > 0 {
		c := b[0]
		kind, size := keyOther, 1
		switch ctl, isCtl := controlKeys[c]; {
		case c == 0x1b:
			kind, size = parseEscape(b)
		case c == '\r' || c == '\n':
			kind = keyEnter
			if c == '\r' && len(b) > 1 && b[1] == '\n' {
				size = 2
			}
		case isCtl:
			kind = ctl
		case c < 0x20:
		default:
			if !utf8.FullRune(b) {
				return keys, b
			}
			r, n := utf8.DecodeRune(b)
			keys = append(keys, key{kind: keyRune, r: r, at: at})
			b = b[n:]
			continue
		}
		keys = append(keys, key{kind: kind, at: at})
		b = b[size:]
	}
	return keys, nil
}

// parseEscape reads an escape sequence: the arrows, Home, End (CSI or SS3,
// and the VT220 forms ESC [ 1 ~ …) and Delete, any other CSI sequence as one
// unknown key, or Esc alone.
func parseEscape(b []byte) (keyKind, int) {
	if len(b) < 2 || (b[1] != '[' && b[1] != 'O') {
		return keyEsc, 1
	}
	for i := 2; i < len(b); i++ {
		if b[i] >= 0x40 && b[i] <= 0x7e {
			if b[i] == '~' {
				return tildeKey(string(b[2:i])), i + 1
			}
			if k, ok := finalKeys[b[i]]; ok {
				return k, i + 1
			}
			return keyOther, i + 1
		}
	}
	return keyOther, len(b)
}

// tildeKey names a VT220 key, ESC [ n ~.
func tildeKey(n string) keyKind {
	switch n {
	case "1", "7":
		return keyHome
	case "4", "8":
		return keyEnd
	case "3":
		return keyDelete
	}
	return keyOther
}
