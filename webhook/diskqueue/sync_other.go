//go:build !linux

package diskqueue

import "os"

// datasync makes f's written data durable.
func datasync(f *os.File) error { return f.Sync() }
