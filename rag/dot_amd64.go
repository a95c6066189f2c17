package rag

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernel: 8 lanes with fused multiply-add do
// the scan's 50k×256 multiply-adds several times faster than scalar Go.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

// dot is the float32 dot product of a and b[:len(a)].
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	n := len(a) &^ 31
	if !useAVX2 || n == 0 {
		return dotGeneric(a, b)
	}
	s := dotAVX2(&a[0], &b[0], n)
	if n < len(a) {
		s += dotGeneric(a[n:], b[n:])
	}
	return s
}
