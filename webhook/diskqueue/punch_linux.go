package diskqueue

import (
	"os"
	"syscall"
)

// punch frees the file system's blocks of f from off for n bytes, keeping
// f's size; those bytes then read as zeros.
func punch(f *os.File, off, n int64) error {
	const punchHole, keepSize = 0x02, 0x01 // FALLOC_FL_PUNCH_HOLE, FALLOC_FL_KEEP_SIZE
	return syscall.Fallocate(int(f.Fd()), punchHole|keepSize, off, n)
}
