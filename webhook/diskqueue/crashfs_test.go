package diskqueue

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// crashFS is a file system in memory that knows, for every file and
// directory, what is durable and what is not: the writes and truncations of
// a file since its last sync, the names made, changed or removed in a
// directory since its last sync. At each sync, and at random steps
// between, it hands a snapshot of that state to onCut; a snapshot makes
// the images a power cut at that step could leave (see snapshot.image).
type crashFS struct {
	mu     sync.Mutex
	root   *memDir
	inodes []*inode
	rng    *rand.Rand
	fault  fault
	// onCut, when set, is called at each step a power cut is tried at,
	// with crashFS.mu held.
	onCut func(*snapshot)
	// everyStep tries a power cut at every step, not one in four.
	everyStep bool
	// made and removed count the files made and removed, by the start of
	// their names ("log", "keys", "checkpoints").
	made, removed map[string]int
}

// fault is a way to break the queue's use of the disk, which the crash
// harness must catch.
type fault int

const (
	noFault         fault = iota
	noopSync              // a file's sync makes nothing durable
	noDirSync             // a directory's sync makes nothing durable
	syncBeforeWrite       // each sync comes before its write, not after
)

func (f fault) String() string {
	return [...]string{"none", "no-op sync", "no directory sync", "sync before write"}[f]
}

type inode struct {
	durable []byte   // as a power cut leaves it, but for ops; never changed in place
	ops     []fileOp // since the last sync; never changed in place
	cur     []byte   // as read
}

// fileOp is a write (data at off) or a truncation (to size, data nil).
type fileOp struct {
	off  int64
	data []byte
	size int64
	cut  bool
}

type memDir struct {
	durable map[string]entry // never changed in place
	ops     []dirOp          // since the last sync
	cur     map[string]entry
}

// entry is a name's file or directory.
type entry struct {
	ino *inode
	dir *memDir
}

// dirOp is a name made (to, e), changed (from, to) or removed (from).
type dirOp struct {
	from, to string
	e        entry
}

func newCrashFS(seed uint64) *crashFS {
	return &crashFS{root: newMemDir(), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), made: map[string]int{}, removed: map[string]int{}}
}

func newMemDir() *memDir { return &memDir{durable: map[string]entry{}, cur: map[string]entry{}} }

func (d *memDir) apply(op dirOp) {
	switch {
	case op.from == "":
		d.cur[op.to] = op.e
	case op.to == "":
		delete(d.cur, op.from)
	default:
		d.cur[op.to] = d.cur[op.from]
		delete(d.cur, op.from)
	}
	d.ops = append(d.ops, op)
}

// lookup returns the directory holding path, and path's name in it.
func (fs *crashFS) lookup(path string) (*memDir, string, error) {
	path = filepath.Clean(path)
	d := fs.root
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, p := range parts[:len(parts)-1] {
		e, ok := d.cur[p]
		if !ok || e.dir == nil {
			return nil, "", &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
		}
		d = e.dir
	}
	return d, parts[len(parts)-1], nil
}

func (fs *crashFS) dir(path string) (*memDir, error) {
	if filepath.Clean(path) == "/" {
		return fs.root, nil
	}
	d, name, err := fs.lookup(path)
	if err != nil {
		return nil, err
	}
	e, ok := d.cur[name]
	if !ok || e.dir == nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
	return e.dir, nil
}

// maybeCut tries a power cut at one step in four between syncs.
func (fs *crashFS) maybeCut() {
	if fs.onCut != nil && (fs.everyStep || fs.rng.IntN(4) == 0) {
		fs.onCut(fs.snapshot())
	}
}

func (fs *crashFS) cut() {
	if fs.onCut != nil {
		fs.onCut(fs.snapshot())
	}
}

func (fs *crashFS) MkdirAll(path string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d := fs.root
	for _, p := range strings.Split(strings.TrimPrefix(filepath.Clean(path), "/"), "/") {
		e, ok := d.cur[p]
		if !ok {
			e = entry{dir: newMemDir()}
			d.apply(dirOp{to: p, e: e})
			if fs.fault != noDirSync {
				fs.syncDir(d) // each level made durable in its parent, as osFS does
			}
		}
		if e.dir == nil {
			return &os.PathError{Op: "mkdir", Path: path, Err: errors.New("not a directory")}
		}
		d = e.dir
	}
	return nil
}

func (fs *crashFS) Lock(string) (io.Closer, error) { return io.NopCloser(nil), nil }

func (fs *crashFS) Glob(dir, pattern string) ([]string, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, err := fs.dir(dir)
	if err != nil {
		return nil, nil
	}
	var out []string
	for name := range d.cur {
		if ok, _ := filepath.Match(pattern, name); ok {
			out = append(out, filepath.Join(dir, name))
		}
	}
	slices.Sort(out)
	return out, nil
}

func (fs *crashFS) Create(path string) (file, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, name, err := fs.lookup(path)
	if err != nil {
		return nil, err
	}
	if e, ok := d.cur[name]; ok {
		f := &memFile{fs: fs, ino: e.ino}
		f.truncate(0)
		return f, nil
	}
	ino := &inode{}
	fs.inodes = append(fs.inodes, ino)
	d.apply(dirOp{to: name, e: entry{ino: ino}})
	fs.made[kindOf(name)]++
	fs.maybeCut()
	return &memFile{fs: fs, ino: ino}, nil
}

func (fs *crashFS) Open(path string, _ bool) (file, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, name, err := fs.lookup(path)
	if err != nil {
		return nil, err
	}
	e, ok := d.cur[name]
	if !ok || e.ino == nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
	}
	return &memFile{fs: fs, ino: e.ino}, nil
}

func (fs *crashFS) ReadFile(path string) ([]byte, error) {
	f, err := fs.Open(path, false)
	if err != nil {
		return nil, err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return slices.Clone(f.(*memFile).ino.cur), nil
}

func (fs *crashFS) Rename(from, to string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, name, err := fs.lookup(from)
	if err != nil {
		return err
	}
	if _, ok := d.cur[name]; !ok || filepath.Dir(from) != filepath.Dir(to) {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: os.ErrNotExist}
	}
	d.apply(dirOp{from: name, to: filepath.Base(to)})
	fs.maybeCut()
	return nil
}

func (fs *crashFS) Remove(path string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, name, err := fs.lookup(path)
	if err != nil {
		return err
	}
	if _, ok := d.cur[name]; !ok {
		return &os.PathError{Op: "remove", Path: path, Err: os.ErrNotExist}
	}
	d.apply(dirOp{from: name})
	fs.removed[kindOf(name)]++
	fs.maybeCut()
	return nil
}

func kindOf(name string) string {
	kind, _, _ := strings.Cut(name, "-")
	kind, _, _ = strings.Cut(kind, ".")
	return kind
}

func (fs *crashFS) SyncDir(path string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	d, err := fs.dir(path)
	if err != nil {
		return err
	}
	if fs.fault != noDirSync {
		fs.syncDir(d)
	}
	fs.cut()
	return nil
}

func (fs *crashFS) syncDir(d *memDir) {
	d.durable, d.ops = maps.Clone(d.cur), nil
}

// memFile is an open file of a crashFS.
type memFile struct {
	fs     *crashFS
	ino    *inode
	closed bool
}

func (f *memFile) ReadAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if off >= int64(len(f.ino.cur)) {
		return 0, io.EOF
	}
	n := copy(b, f.ino.cur[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	if f.fs.fault == syncBeforeWrite {
		f.sync()
	}
	f.ino.cur = writeAt(f.ino.cur, b, off)
	f.ino.ops = append(f.ino.ops, fileOp{off: off, data: slices.Clone(b)})
	f.fs.maybeCut()
	return len(b), nil
}

func writeAt(cur, b []byte, off int64) []byte {
	if end := off + int64(len(b)); end > int64(len(cur)) {
		cur = append(cur, make([]byte, end-int64(len(cur)))...)
	}
	copy(cur[off:], b)
	return cur
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	f.truncate(size)
	f.fs.maybeCut()
	return nil
}

func (f *memFile) truncate(size int64) {
	f.ino.cur = resize(f.ino.cur, size)
	f.ino.ops = append(f.ino.ops, fileOp{size: size, cut: true})
}

func resize(b []byte, size int64) []byte {
	if size <= int64(len(b)) {
		return b[:size:size] // a later append copies: a snapshot's bytes stay
	}
	return append(b, make([]byte, size-int64(len(b)))...)
}

func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return os.ErrClosed
	}
	if f.fs.fault == noFault || f.fs.fault == noDirSync {
		f.sync()
	}
	f.fs.cut()
	return nil
}

func (f *memFile) sync() { f.ino.durable, f.ino.ops = slices.Clone(f.ino.cur), nil }

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.closed = true
	return nil
}

// snapshot is what is durable and what is not at one step, and what the
// workload knew then (see crashModel).
type snapshot struct {
	root   *memDir
	dirs   map[*memDir]memDir
	inodes map[*inode]inode
	model  int // how many of the workload's events had happened (see crashModel)
}

func (fs *crashFS) snapshot() *snapshot {
	s := &snapshot{root: fs.root, dirs: map[*memDir]memDir{}, inodes: map[*inode]inode{}}
	var walk func(d *memDir)
	walk = func(d *memDir) {
		if _, ok := s.dirs[d]; ok {
			return
		}
		s.dirs[d] = memDir{durable: d.durable, ops: slices.Clip(d.ops)}
		for _, m := range []map[string]entry{d.durable, d.cur} {
			for _, e := range m {
				if e.dir != nil {
					walk(e.dir)
				}
			}
		}
		for _, op := range d.ops {
			if op.e.dir != nil {
				walk(op.e.dir)
			}
		}
	}
	walk(fs.root)
	for _, ino := range fs.inodes {
		s.inodes[ino] = inode{durable: ino.durable, ops: slices.Clip(ino.ops)}
	}
	return s
}

// How an image treats the steps not yet durable. For files: every write
// and truncation kept, all dropped, each kept or dropped, each write kept
// sector by sector (holes), or kept in order up to one torn at a sector.
// For directories: every name change kept, all undone, each kept or not.
const (
	keepAll = iota
	dropAll
	eachOrNot
	holes
	tornAt
	fileModes
)

const sector = 512

// cutMode says how an image is made.
type cutMode struct {
	files, dirs int
}

func (m cutMode) String() string {
	return fmt.Sprintf("files=%s dirs=%s", [...]string{"kept", "dropped", "each-or-not", "holes", "torn"}[m.files],
		[...]string{"kept", "undone", "each-or-not"}[m.dirs])
}

// image returns the file system a power cut at s leaves, made as mode says
// with rng's choices, everything in it durable.
func (s *snapshot) image(mode cutMode, rng *rand.Rand) *crashFS {
	fs := newCrashFS(rng.Uint64())
	inodes := map[*inode]*inode{}
	dirs := map[*memDir]*memDir{}
	var build func(d *memDir) *memDir
	build = func(d *memDir) *memDir {
		if n, ok := dirs[d]; ok {
			return n
		}
		st := s.dirs[d]
		names := maps.Clone(st.durable)
		tmp := &memDir{cur: names}
		for _, op := range st.ops {
			keep := mode.dirs == keepAll || mode.dirs == eachOrNot && rng.IntN(2) == 0
			if _, ok := names[op.from]; keep && (op.from == "" || ok) {
				tmp.apply(op)
			}
		}
		n := newMemDir()
		dirs[d] = n
		for name, e := range names {
			switch {
			case e.dir != nil:
				n.cur[name] = entry{dir: build(e.dir)}
			default:
				ino, ok := inodes[e.ino]
				if !ok {
					ino = s.file(e.ino, mode.files, rng)
					inodes[e.ino] = ino
					fs.inodes = append(fs.inodes, ino)
				}
				n.cur[name] = entry{ino: ino}
			}
		}
		n.durable = maps.Clone(n.cur)
		return n
	}
	fs.root = build(s.root)
	return fs
}

// file returns the bytes of ino after a power cut.
func (s *snapshot) file(ino *inode, mode int, rng *rand.Rand) *inode {
	st := s.inodes[ino]
	b := slices.Clone(st.durable)
	torn := rng.IntN(len(st.ops) + 1) // tornAt: the op torn; those after it dropped
	for i, op := range st.ops {
		switch {
		case mode == dropAll || mode == eachOrNot && rng.IntN(2) == 0 || mode == tornAt && i > torn:
			continue
		case op.cut:
			b = resize(b, op.size)
		case mode == holes || mode == tornAt && i == torn:
			keepUpTo := op.off + int64(len(op.data))
			if mode == tornAt {
				keepUpTo = (op.off/sector + int64(rng.IntN(int(len(op.data)/sector+2)))) * sector
			}
			for at := op.off; at < op.off+int64(len(op.data)); {
				end := min((at/sector+1)*sector, op.off+int64(len(op.data)))
				if mode == holes && rng.IntN(2) == 0 || mode == tornAt && end <= keepUpTo {
					b = writeAt(b, op.data[at-op.off:end-op.off], at)
				}
				at = end
			}
		default:
			b = writeAt(b, op.data, op.off)
		}
	}
	return &inode{durable: b, cur: slices.Clone(b)}
}
