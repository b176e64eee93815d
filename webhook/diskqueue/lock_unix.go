//go:build unix

package diskqueue

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

// lockFile takes an advisory lock on f, exclusive or shared, or returns
// errLocked at once when another process holds a conflicting one.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
