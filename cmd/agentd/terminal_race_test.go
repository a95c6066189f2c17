//go:build race

package main

// raceEnabled builds the agentd the terminal tests run with the race
// detector too.
const raceEnabled = true
