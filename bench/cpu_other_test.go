//go:build !unix

package bench

import "time"

// processCPU is not measured here: the interleaved benchmark then reports
// clock time only.
func processCPU() time.Duration { return 0 }
