//go:build race

package collab

// raceEnabled: the race detector makes sync.Pool drop what it is given, so
// a decoding's pooled state is sometimes made anew and allocations are not
// those of a program.
const raceEnabled = true
