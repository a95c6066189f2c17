package rag

import (
	"math/rand/v2"
	"testing"
)

func BenchmarkZZScan(b *testing.B) {
	var m matrix
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, 256)
	for n := range 50000 {
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		normalize(v)
		m.set(int32(n), v)
	}
	q := make([]float32, 256)
	for j := range q {
		q[j] = r.Float32() - 0.5
	}
	normalize(q)
	b.ResetTimer()
	for b.Loop() {
		m.search(q, 50, 0.0)
	}
}

func BenchmarkZZDot(b *testing.B) {
	x := make([]float32, 256)
	y := make([]float32, 256)
	var s float32
	for b.Loop() {
		s += dot(x, y)
	}
	_ = s
}

func TestZZDotAVX(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 64, 255, 256, 257, 768} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = r.Float32()-0.5, r.Float32()-0.5
		}
		x, y := dot(a, b), dotGeneric(a, b)
		if d := x - y; d > 1e-4 || d < -1e-4 {
			t.Fatalf("n=%d: %v vs %v", n, x, y)
		}
	}
}
