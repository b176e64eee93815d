//go:build !race

package jsonkeep

// raceEnabled: see race_test.go.
const raceEnabled = false
