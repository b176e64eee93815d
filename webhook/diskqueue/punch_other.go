//go:build !linux

package diskqueue

import (
	"errors"
	"os"
)

// punch is Linux only; elsewhere freed space comes back when the queue is
// drained and compacted.
func punch(*os.File, int64, int64) error {
	return errors.ErrUnsupported
}
