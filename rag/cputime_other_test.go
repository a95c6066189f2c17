//go:build !unix

package rag

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
