package sandbox

import (
	"sync"
	"time"
)

// A session's commands without the network share a network namespace of
// their own: the loopback is up, nothing is routed out. A server that one
// of them starts on 127.0.0.1 is reachable from the session's other
// commands (those running at the same time: a command's leftovers end with
// it), and from nothing else, neither another session nor the host. The
// namespace belongs to the session's holder (holder_linux.go), which
// starts every entry point of the session in it. It ends when the session
// has had no command running for sessionIdle, when EndSession is called,
// or with the daemon.

// sessionIdle is how long a session's network outlives its last command.
const sessionIdle = 30 * time.Minute

type sessionNet struct {
	h    *holder
	live int         // commands started and not yet waited for
	idle *time.Timer // ends the session once it fires with live == 0
}

var holders struct {
	startMu  sync.Mutex // held while a holder is made
	mu       sync.Mutex
	host     *holder // for the commands in the host's network namespace
	sessions map[string]*sessionNet
	// spare is a session holder started ahead of time, with an entry
	// point waiting in it, so that a session's first command waits for
	// neither.
	spare      *spareHolder
	spareAsked bool
}

type spareHolder struct {
	h *holder
	e *entryProc
}

// holderFor returns the holder of session ("" for the host's network), and
// an entry point already waiting in it when the holder is new. Holders are
// made one at a time (startMu): commands that start together share the one
// made, and a holder is replaced only once it has died, never while
// another command may be asking it for an entry point.
func holderFor(session string) (*holder, *entryProc, error) {
	if h := currentHolder(session); h != nil {
		return h, nil, nil
	}
	holders.startMu.Lock()
	defer holders.startMu.Unlock()
	if h := currentHolder(session); h != nil {
		return h, nil, nil // made while this one waited
	}
	var h *holder
	var e *entryProc
	if session == "" {
		var err error
		if h, err = startHolder(false); err != nil {
			return nil, nil, err
		}
	} else {
		holders.mu.Lock()
		spare := holders.spare
		holders.spare = nil
		holders.mu.Unlock()
		go refillSpare()
		if spare != nil && spare.h.alive() {
			h, e = spare.h, spare.e
		} else {
			if spare != nil {
				spare.close()
			}
			var err error
			if h, err = startHolder(true); err != nil {
				return nil, nil, err
			}
		}
	}
	holders.mu.Lock()
	var old *holder
	if session == "" {
		old, holders.host = holders.host, h
	} else {
		if holders.sessions == nil {
			holders.sessions = map[string]*sessionNet{}
		}
		if s := holders.sessions[session]; s != nil {
			old, s.h = s.h, h
		} else {
			holders.sessions[session] = &sessionNet{h: h}
		}
	}
	holders.mu.Unlock()
	if old != nil {
		old.close() // dead already
	}
	return h, e, nil
}

// currentHolder is session's holder if it is alive.
func currentHolder(session string) *holder {
	holders.mu.Lock()
	h := holders.host
	if session != "" {
		h = nil
		if s := holders.sessions[session]; s != nil {
			h = s.h
		}
	}
	holders.mu.Unlock()
	if h != nil && h.alive() {
		return h
	}
	return nil
}

// refillSpare starts the next spare session holder, once at a time.
func refillSpare() {
	holders.mu.Lock()
	if holders.spare != nil || holders.spareAsked {
		holders.mu.Unlock()
		return
	}
	holders.spareAsked = true
	holders.mu.Unlock()
	var spare *spareHolder
	if h, err := startHolder(true); err == nil {
		if e, err := h.spawn(false); err == nil {
			spare = &spareHolder{h: h, e: e}
		} else {
			h.close()
		}
	}
	holders.mu.Lock()
	holders.spareAsked = false
	old := holders.spare
	holders.spare = spare
	holders.mu.Unlock()
	if old != nil {
		old.close()
	}
}

func (s *spareHolder) close() {
	if s.e != nil {
		s.e.discard()
	}
	s.h.close()
}

// sessionOpen reports whether session has a network namespace now.
func sessionOpen(session string) bool {
	holders.mu.Lock()
	defer holders.mu.Unlock()
	return holders.sessions[session] != nil
}

// sessionStarted counts a command of session that started; its Wait calls
// the function returned.
func sessionStarted(session string) func() {
	holders.mu.Lock()
	defer holders.mu.Unlock()
	s := holders.sessions[session]
	if s == nil {
		return func() {}
	}
	s.live++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	var once sync.Once
	return func() { once.Do(func() { sessionDone(session, s) }) }
}

func sessionDone(session string, s *sessionNet) {
	holders.mu.Lock()
	defer holders.mu.Unlock()
	s.live--
	if s.live > 0 || holders.sessions[session] != s {
		return
	}
	s.idle = time.AfterFunc(sessionIdle, func() {
		holders.mu.Lock()
		idle := holders.sessions[session] == s && s.live == 0
		holders.mu.Unlock()
		if idle {
			EndSession(session)
		}
	})
}

// EndSession ends the network namespace of a session's commands: its
// holder and the entry point waiting in it. Commands still running in it
// run on (a namespace ends with the last process in it); the session's
// next command gets a new one.
func EndSession(session string) {
	holders.mu.Lock()
	s := holders.sessions[session]
	delete(holders.sessions, session)
	holders.mu.Unlock()
	if s == nil {
		return
	}
	if s.idle != nil {
		s.idle.Stop()
	}
	discardWarm(func(k nsKey) bool { return k.session == session })
	s.h.close()
}

// closeIdleHolders ends the host's holder, the spare and the sessions
// without a running command.
func closeIdleHolders() {
	holders.mu.Lock()
	host, spare := holders.host, holders.spare
	holders.host, holders.spare = nil, nil
	var idle []string
	for name, s := range holders.sessions {
		if s.live == 0 {
			idle = append(idle, name)
		}
	}
	holders.mu.Unlock()
	if host != nil {
		host.close()
	}
	if spare != nil {
		spare.close()
	}
	for _, name := range idle {
		EndSession(name)
	}
}
