package diskqueue

import (
	"os"
	"syscall"
)

// datasync makes f's written data durable; its times need not be.
func datasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
