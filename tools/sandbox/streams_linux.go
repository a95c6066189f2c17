package sandbox

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// streams connects a command's standard streams as os/exec does (a file is
// passed as it is, a reader or writer through a pipe and a copying
// goroutine), for an entry point that receives them after it started.
type streams struct {
	child   [3]*os.File // what the command gets
	ours    []*os.File  // the child's ends opened here, closed once sent
	pipes   []*os.File  // our ends of the pipes
	errs    chan error
	copies  int
	aborted bool
}

func newStreams(stdin io.Reader, stdout, stderr io.Writer, tty *os.File) (*streams, error) {
	s := &streams{errs: make(chan error, 3)}
	if tty != nil {
		s.child = [3]*os.File{tty, tty, tty}
		return s, nil
	}
	var err error
	if s.child[0], err = s.input(stdin); err == nil {
		if s.child[1], err = s.output(stdout); err == nil {
			if stderr != nil && sameWriter(stderr, stdout) {
				s.child[2] = s.child[1]
			} else {
				s.child[2], err = s.output(stderr)
			}
		}
	}
	if err != nil {
		s.abort()
		return nil, err
	}
	return s, nil
}

func (s *streams) input(r io.Reader) (*os.File, error) {
	if f, ok := r.(*os.File); ok {
		return f, nil
	}
	if r == nil {
		f, err := os.Open(os.DevNull)
		if err == nil {
			s.ours = append(s.ours, f)
		}
		return f, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.ours, s.pipes = append(s.ours, pr), append(s.pipes, pw)
	s.copies++
	go func() {
		_, err := io.Copy(pw, r)
		if cerr := pw.Close(); err == nil {
			err = cerr
		}
		s.errs <- ignoreClosed(err) // the command need not read all its input
	}()
	return pr, nil
}

func (s *streams) output(w io.Writer) (*os.File, error) {
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	if w == nil {
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err == nil {
			s.ours = append(s.ours, f)
		}
		return f, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	s.ours, s.pipes = append(s.ours, pw), append(s.pipes, pr)
	s.copies++
	go func() {
		_, err := io.Copy(w, pr)
		pr.Close()
		s.errs <- err
	}()
	return pw, nil
}

// sent closes the child's ends opened here, now that the entry point has
// its own copies: the output pipes then end when the command's processes
// are gone.
func (s *streams) sent() {
	for _, f := range s.ours {
		f.Close()
	}
	s.ours = nil
}

// abort closes everything; the copying goroutines end.
func (s *streams) abort() {
	s.sent()
	for _, f := range s.pipes {
		f.Close()
	}
	s.aborted = true
}

// wait waits for the copying to end, for at most delay (0: no limit) once
// the process is gone, as exec.Cmd.Wait does with WaitDelay.
func (s *streams) wait(delay time.Duration) error {
	var timeout <-chan time.Time
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		timeout = t.C
	}
	var first error
	forced := false
	for n := 0; n < s.copies; {
		select {
		case err := <-s.errs:
			n++
			if first == nil && !(forced && errors.Is(err, os.ErrClosed)) {
				first = err
			}
		case <-timeout:
			timeout = nil
			forced = true
			for _, f := range s.pipes {
				f.Close()
			}
		}
	}
	if forced && first == nil {
		return exec.ErrWaitDelay
	}
	return first
}

func ignoreClosed(err error) error {
	if errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// sameWriter reports whether two writers are the same value (both streams
// then share one pipe), as exec.Cmd does; uncomparable values differ.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
