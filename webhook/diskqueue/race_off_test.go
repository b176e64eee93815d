//go:build !race

package diskqueue

const raceOn = false
