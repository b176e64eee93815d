//go:build !race

package collab

// raceEnabled: see race_test.go.
const raceEnabled = false
