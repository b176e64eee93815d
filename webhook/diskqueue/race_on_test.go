//go:build race

package diskqueue

// raceOn: the race detector slows the crash harness about tenfold; under it
// the harness checks fewer images.
const raceOn = true
