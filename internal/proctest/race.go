//go:build race

package proctest

// raceEnabled builds the agentd the tests run with the race
// detector too.
const raceEnabled = true
