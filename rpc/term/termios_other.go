//go:build !linux && !darwin

package term

import "errors"

type termios struct{}

var errNoTermios = errors.New("terminal modes are not supported on this system")

func getTermios(int) (*termios, error) { return nil, errNoTermios }
func setTermios(int, *termios) error   { return errNoTermios }
func flushInput(int) error             { return errNoTermios }

func quiet(t *termios) *termios { return t }
