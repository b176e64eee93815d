package diskqueue

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// keyRef is a dedup key and the end of its window (unix ns).
type keyRef struct {
	key   string
	until int64
}

// dedup remembers the keys stored within the window. A key is known by two
// independent 64-bit hashes of it, which keeps an entry small; the keys
// themselves are on disk.
type dedup struct {
	window int64
	seeds  [2]maphash.Seed
	m      map[[2]uint64]int64 // hash -> end of the window (unix ns)
	order  []hashUntil         // in the order remembered, for sweeping
	swept  int                 // entries of order already swept
}

type hashUntil struct {
	h     [2]uint64
	until int64
}

func newDedup(window time.Duration) dedup {
	return dedup{window: int64(window), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, m: map[[2]uint64]int64{}}
}

func (k *dedup) hash(key string) [2]uint64 {
	return [2]uint64{maphash.String(k.seeds[0], key), maphash.String(k.seeds[1], key)}
}

// seen reports whether key is remembered at now.
func (k *dedup) seen(key string, now int64) bool {
	if k.window <= 0 || key == "" {
		return false
	}
	until, ok := k.m[k.hash(key)]
	return ok && until > now
}

// rememberAll remembers the dedup keys of d, stored at now, and returns them.
func (k *dedup) rememberAll(d *webhook.Delivery, now int64) []keyRef {
	if k.window <= 0 {
		return nil
	}
	keys := d.DedupKeys()
	refs := make([]keyRef, len(keys))
	for i, key := range keys {
		refs[i] = keyRef{key, now + k.window}
		k.add(key, now+k.window)
	}
	return refs
}

// add remembers key until the given time, unless it is remembered longer.
func (k *dedup) add(key string, until int64) {
	h := k.hash(key)
	if cur, ok := k.m[h]; ok && cur >= until {
		return
	}
	k.m[h] = until
	k.order = append(k.order, hashUntil{h, until})
}

// forget takes back keys remembered by a put whose write failed.
func (k *dedup) forget(refs []keyRef) {
	for _, r := range refs {
		if h := k.hash(r.key); k.m[h] == r.until {
			delete(k.m, h)
		}
	}
}

// sweep forgets the keys past their window: those remembered first, as
// windows end in about the order keys are remembered.
func (k *dedup) sweep(now int64) {
	for k.swept < len(k.order) && k.order[k.swept].until <= now {
		e := k.order[k.swept]
		if k.m[e.h] == e.until {
			delete(k.m, e.h)
		}
		k.swept++
	}
	if k.swept > 1024 && k.swept*2 > len(k.order) {
		k.order = append(k.order[:0], k.order[k.swept:]...)
		k.swept = 0
	}
}

// Seen implements webhook.Queue.
func (q *Queue) Seen(_ context.Context, key string) (bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.keys.seen(key, time.Now().UnixNano()), nil
}

// A key file keeps the dedup keys of removed segments: keyMagic, then
// entries of a length, the key's window end, the key, and a CRC-32C of
// them all. It goes once every key in it is past its window.
const keyMagic = "collabk\x01"

type keyFile struct {
	path  string
	until int64 // the latest window end in it
}

func keyFileName(num uint64) string { return fmt.Sprintf("keys-%016x.seg", num) }

// keepKeys writes the keys of old's puts still within their window to a
// key file, durably.
func (q *Queue) keepKeys(old *segment, now time.Time) error {
	size := len(keyMagic)
	for _, r := range old.keys {
		size += keyEntrySize + len(r.key)
	}
	buf := append(make([]byte, 0, size), keyMagic...)
	var last int64
	for _, r := range old.keys {
		if r.until > now.UnixNano() {
			buf = appendKey(buf, r)
			last = max(last, r.until)
		}
	}
	if last == 0 {
		return nil
	}
	path := filepath.Join(q.dir, keyFileName(old.num))
	if err := q.replaceFile(path, buf); err != nil {
		return fmt.Errorf("diskqueue: keeping dedup keys: %w", err)
	}
	q.mu.Lock()
	q.keyFiles = append(q.keyFiles, keyFile{path, last})
	q.mu.Unlock()
	return nil
}

// keyEntrySize is the size of a key file entry but for its key.
const keyEntrySize = 4 + 8 + 4

func appendKey(b []byte, r keyRef) []byte {
	at := len(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.key)))
	b = binary.LittleEndian.AppendUint64(b, uint64(r.until))
	b = append(b, r.key...)
	return binary.LittleEndian.AppendUint32(b, checksum(b[at:]))
}

// replaceFile puts a file holding data at path, durably: written and
// synced under a new name, renamed, and the rename synced, so that a crash
// leaves the old file or the new one whole.
func (q *Queue) replaceFile(path string, data []byte) error {
	f, err := q.disk.Create(path + ".new")
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = q.disk.Rename(path+".new", path)
	}
	if err == nil {
		err = q.disk.SyncDir(q.dir)
	}
	return err
}

// expireKeyFiles removes the key files whose keys are all past their window.
func (q *Queue) expireKeyFiles(now time.Time) {
	q.mu.Lock()
	var gone []string
	kept := q.keyFiles[:0]
	for _, f := range q.keyFiles {
		if f.until <= now.UnixNano() {
			gone = append(gone, f.path)
		} else {
			kept = append(kept, f)
		}
	}
	q.keyFiles = kept
	q.mu.Unlock()
	for _, path := range gone {
		if err := q.disk.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			q.log(slog.LevelError, "diskqueue: removing an expired key file failed", "error", err)
		}
	}
}

// loadKeyFile remembers the keys of a key file still within their window.
// A damaged entry is counted, logged and read as absent: a repeat of its
// delivery is then stored again rather than lost. q.mu is held.
func (q *Queue) loadKeyFile(path string, now int64) error {
	data, err := q.disk.ReadFile(path)
	if err != nil {
		return fmt.Errorf("diskqueue: reading dedup keys: %w", err)
	}
	if !strings.HasPrefix(string(data), keyMagic) {
		q.keyDamage(path, "not a key file")
		q.keyFiles = append(q.keyFiles, keyFile{path, 0}) // removed at the next tidy
		return nil
	}
	var last int64
	for b := data[len(keyMagic):]; len(b) > 0; {
		if len(b) < 16 {
			q.keyDamage(path, "cut short")
			break
		}
		n := 16 + int(binary.LittleEndian.Uint32(b))
		if n > len(b) || binary.LittleEndian.Uint32(b[n-4:]) != checksum(b[:n-4]) {
			q.keyDamage(path, "checksum mismatch")
			break
		}
		until := int64(binary.LittleEndian.Uint64(b[4:]))
		last = max(last, until)
		if until > now {
			q.keys.add(string(b[12:n-4]), until)
		}
		b = b[n:]
	}
	q.keyFiles = append(q.keyFiles, keyFile{path, last})
	return nil
}

func (q *Queue) keyDamage(path, why string) {
	q.damaged.Add(1)
	q.log(slog.LevelError, "diskqueue: damaged dedup entry ignored; a repeat of its delivery is stored again", "file", filepath.Base(path), "reason", why)
}
