//go:build !race

package await

const raceEnabled = false
