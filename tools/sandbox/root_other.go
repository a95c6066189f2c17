//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
	"os"
)

// Without openat2, Root always walks with os.Root.
func openat2Dir(string) int { return -1 }

func closeFD(int) {}

var errNoOpenat2 = errors.New("openat2 is Linux only")

func (r *Root) openBeneath(string, int, os.FileMode) (*os.File, error) { return nil, errNoOpenat2 }
func (r *Root) mkdirBeneath(string, os.FileMode) error                 { return errNoOpenat2 }
func (r *Root) removeBeneath(string) error                             { return errNoOpenat2 }
func (r *Root) renameBeneath(string, string) error                     { return errNoOpenat2 }
func (r *Root) statBeneath(string, bool) (fs.FileInfo, error)          { return nil, errNoOpenat2 }
