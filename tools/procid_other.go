//go:build !linux

package tools

import "os/exec"

// dieWithDaemon does nothing: only Linux kills a child with its parent.
func dieWithDaemon(*exec.Cmd) {}
