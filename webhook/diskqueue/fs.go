package diskqueue

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// fileSystem is what the queue asks of the file system, each step one
// call, so that a test can stand in for the disk and say what a power cut
// at any step would leave. osFS, the one Open uses, makes the same system
// calls the queue would make by itself.
type fileSystem interface {
	// MkdirAll makes dir and its missing parents, owner only, each made
	// durable in its parent; an existing dir is made owner only too.
	MkdirAll(dir string) error
	// Lock locks dir for this process.
	Lock(dir string) (io.Closer, error)
	// Glob returns the paths in dir whose names match pattern, sorted.
	Glob(dir, pattern string) ([]string, error)
	// Create makes an empty file at path, or empties the one there.
	Create(path string) (file, error)
	// Open opens the file at path, read-only or for writing too.
	Open(path string, write bool) (file, error)
	ReadFile(path string) ([]byte, error)
	Rename(from, to string) error
	Remove(path string) error
	// SyncDir makes the names made, changed or removed in dir durable.
	SyncDir(dir string) error
}

// file is an open file of a fileSystem.
type file interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	// Sync makes the file's data and size durable (not its name).
	Sync() error
	Close() error
}

// osFS is the file system of the operating system.
type osFS struct{}

func (osFS) MkdirAll(dir string) error {
	var made []string // the directories that do not exist yet, deepest first
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || !errors.Is(err, os.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
		made = append(made, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Bodies can hold private data: owner only, also for a directory that
	// existed.
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	for _, d := range made {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

func (osFS) Lock(dir string) (io.Closer, error) { return takeLock(dir) }

func (osFS) Glob(dir, pattern string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, pattern)) // sorted, as os.ReadDir is
}

func (osFS) Create(path string) (file, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Open(path string, write bool) (file, error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) ReadFile(path string) ([]byte, error) { return os.ReadFile(path) }
func (osFS) Rename(from, to string) error         { return os.Rename(from, to) }
func (osFS) Remove(path string) error             { return os.Remove(path) }
func (osFS) SyncDir(dir string) error             { return syncDir(dir) }

// osFile is a file of osFS; its Sync is an fdatasync where there is one.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }

// syncDir makes a file's creation, rename or removal in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
