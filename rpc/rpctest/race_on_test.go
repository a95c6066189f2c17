//go:build race

package rpctest

// raceDetector: the race detector instruments the in-process daemon, which
// then streams output ten to twenty times slower.
const raceDetector = true
