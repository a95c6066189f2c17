//go:build linux

package sandbox

const (
	auditArch        = 0xc000003e // AUDIT_ARCH_X86_64
	seccompSupported = true
)
