//go:build linux && !amd64 && !arm64

package sandbox

// No seccomp filter on other architectures: the network namespace and
// Landlock's TCP rules still hold, but UDP is only off with the namespace.
const (
	auditArch        = 0
	seccompSupported = false
)
