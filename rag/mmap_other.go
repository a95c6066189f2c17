//go:build !unix

package rag

import "os"

// mapFile reads the whole file where memory mapping is not wired up.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
