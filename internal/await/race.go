//go:build race

package await

const raceEnabled = true
