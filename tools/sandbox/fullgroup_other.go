//go:build !linux

package sandbox

import "os/exec"

// fullGroup is a Full command's control group: none outside Linux.
type fullGroup struct{}

func gateFull(*exec.Cmd) *fullGroup { return nil }
func (*fullGroup) open(int)         {}
func (*fullGroup) abort()           {}
func (*fullGroup) kill()            {}
func (*fullGroup) done()            {}
