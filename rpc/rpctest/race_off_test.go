//go:build !race

package rpctest

const raceDetector = false
