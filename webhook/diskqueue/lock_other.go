//go:build !unix

package diskqueue

import (
	"errors"
	"os"
)

var errLocked = errors.New("locked")

// lockFile does nothing here: this system has no advisory locks that the
// standard library reaches, so one process at a time is up to the user.
func lockFile(*os.File) error { return nil }
