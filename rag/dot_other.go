//go:build !amd64

package rag

func dot(a, b []float32) float32 { return dotGeneric(a, b) }
