package diskqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// openDir makes dir, owner only and durable in its parent (with noCreate,
// checks that it holds a queue), and locks it.
func openDir(disk fileSystem, dir string, noCreate bool) (io.Closer, error) {
	if noCreate {
		segs, _ := disk.Glob(dir, "log-*.seg")
		if len(segs) == 0 {
			return nil, fmt.Errorf("%w: %s holds no log-*.seg file", ErrNoQueue, dir)
		}
	} else if err := disk.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("diskqueue: queue directory: %w", err)
	}
	return disk.Lock(dir)
}

// takeLock locks dir itself, so that a queue opened with NoCreate, which
// creates no file, is held alike. It waits a second for another process to
// let go.
func takeLock(dir string) (io.Closer, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("diskqueue: queue directory: %w", err)
	}
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		err = lockFile(f)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, errLocked) || time.Now().After(deadline) {
			break
		}
	}
	_ = f.Close()
	if errors.Is(err, errLocked) {
		return nil, fmt.Errorf("%w: %s", ErrHeld, dir)
	}
	return nil, fmt.Errorf("diskqueue: queue lock: %w", err)
}

// load reads the queue's files: it replays the log, remembers the kept
// dedup keys, reads the checkpoints, and schedules the pending deliveries
// in arrival order. What it keeps of the log it makes durable, since a
// process that crashed may have left it in the page cache only.
func (q *Queue) load() error {
	names, _ := q.disk.Glob(q.dir, "log-*.seg")
	for _, name := range names {
		if err := q.replay(name); err != nil {
			return err
		}
	}
	if !q.opts.NoCreate {
		// Files being made under a temporary name when a crash came.
		for _, pattern := range []string{"log-*.seg.new", "keys-*.seg.new"} {
			stale, _ := q.disk.Glob(q.dir, pattern)
			for _, name := range stale {
				_ = q.disk.Remove(name)
			}
		}
		for _, seg := range q.segs {
			if err := seg.f.Sync(); err != nil {
				return fmt.Errorf("diskqueue: syncing %s: %w", seg.path, err)
			}
		}
		if err := q.disk.SyncDir(q.dir); err != nil {
			return fmt.Errorf("diskqueue: syncing %s: %w", q.dir, err)
		}
	}
	if len(q.segs) == 0 {
		seg, err := q.createSegment(1, 0)
		if err != nil {
			return err
		}
		q.segs = append(q.segs, seg)
	}
	if !q.opts.NoCreate {
		q.makeAhead(q.head().num + 1)
	}
	now := time.Now().UnixNano()
	keyNames, _ := q.disk.Glob(q.dir, "keys-*.seg")
	for _, name := range keyNames {
		if err := q.loadKeyFile(name, now); err != nil {
			return err
		}
	}
	if err := q.loadCheckpoints(); err != nil {
		return err
	}
	q.schedule()
	return nil
}

// replay reads a segment and applies its records, then cuts off what
// follows the last one kept (but for NoCreate; see keptRecords).
func (q *Queue) replay(path string) error {
	f, err := q.disk.Open(path, true)
	if err != nil && q.opts.NoCreate {
		f, err = q.disk.Open(path, false)
	}
	if err != nil {
		return fmt.Errorf("diskqueue: opening %s: %w", path, err)
	}
	data, err := q.disk.ReadFile(path)
	if err == nil && (len(data) < segHeaderSize || !isSegment(data)) {
		err = errors.New("not a queue segment")
	}
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("diskqueue: queue file %s is damaged (%w); move it away to start afresh", path, err)
	}
	num, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "log-"), ".seg"), 16, 64)
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("diskqueue: unexpected segment name %s", path)
	}
	seg := &segment{num: num, path: path, f: f}
	q.segs = append(q.segs, seg)
	q.nextID = max(q.nextID, binary.LittleEndian.Uint64(data[len(segMagic):]))
	end, why := q.keptRecords(seg, data)
	seg.size = end
	seg.synced.Store(end)
	if why == "" || q.opts.NoCreate {
		return nil
	}
	q.log(slog.LevelWarn, "diskqueue: cut off the end of a segment: it holds records whose write a crash cut short",
		"segment", filepath.Base(path), "offset", end, "bytes", len(bytes.TrimRight(data[end:], "\x00")), "reason", why)
	err = f.Truncate(end)
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return fmt.Errorf("diskqueue: cutting the end off %s: %w", path, err)
	}
	return nil
}

// isSegment reports whether data begins as a segment does, of this format
// or of the one before it, whose records read alike.
func isSegment(data []byte) bool {
	return strings.HasPrefix(string(data), segMagic) || strings.HasPrefix(string(data), segMagicV1)
}

// keptRecords applies the records of a segment that are kept, and returns
// where they end, with why the bytes after it are cut off ("" when they
// are the zeros the segment was filled with, or nothing).
//
// The records are read in order, each where the one before ends: never
// inside a body, so that no body, whatever a sender put in it, is read as
// a record. The first header that does not read ends the log. Past it,
// nothing is where a record could be found: the bytes go, as a write cut
// short. A record whose header reads but whose fields or body do not is
// damage on the disk when a mark after it vouches that a sync covered it
// (see tMark): it is dead-lettered and the records after it read.
// Otherwise no sync covered it, its Put never returned, and it goes with
// all that follows it, its id and dedup keys with it.
func (q *Queue) keptRecords(seg *segment, data []byte) (int64, string) {
	type rec struct {
		off   int64
		h     header
		whole bool
	}
	var recs []rec
	var synced int64 // how far a mark vouches that this segment was synced
	end, why := int64(segHeaderSize), ""
	for end < int64(len(data)) {
		h, err := decodeHeader(data[end:])
		if err != nil || end+h.size() > int64(len(data)) {
			if !allZero(data[end:]) {
				why = "a record header does not read"
				if err == nil {
					why = "a record runs past the end of the file"
				}
			}
			break
		}
		if h.typ == tMark {
			synced = max(synced, int64(h.id))
		} else {
			recs = append(recs, rec{end, h, wholeRecord(data[end:end+h.size()], h)})
		}
		end += h.size()
	}
	for _, r := range recs {
		if !r.whole && r.off >= synced {
			return r.off, "a record no sync covered fails its checksum"
		}
		q.apply(seg, r.off, r.h, data[r.off+headerSize:r.off+headerSize+int64(r.h.metaLen)], r.whole)
	}
	return end, why
}

// wholeRecord reports whether the meta and body of rec match its header's
// checksums.
func wholeRecord(rec []byte, h header) bool {
	meta := rec[headerSize : headerSize+int64(h.metaLen)]
	return checksum(meta) == h.metaSum && (h.typ != tPut || checksum(rec[headerSize+int64(h.metaLen):]) == h.bodySum)
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// apply applies a record read back from the log; one not whole is damage
// on the disk, after it was synced.
func (q *Queue) apply(seg *segment, off int64, h header, meta []byte, whole bool) {
	q.nextID = max(q.nextID, h.id)
	if h.typ == tPut {
		q.applyPut(seg, off, h, meta, whole)
		return
	}
	it := q.items[h.id]
	if it == nil {
		return // about a delivery whose put is in a segment removed since
	}
	if !whole {
		q.damaged.Add(1)
		q.log(slog.LevelError, "diskqueue: damaged state record; read as an attempt made", "id", h.id)
	}
	switch h.typ {
	case tLease:
		if n, k := binary.Uvarint(meta); whole && k > 0 {
			it.attempt = int(n)
		} else {
			it.attempt++
		}
	case tRetry, tDead:
		it.lastError = string(meta)
		if !whole {
			it.lastError = recordDamage(h.id).Error()
		}
		it.dead = it.dead || h.typ == tDead
	case tAck, tDrop:
		it.seg.drop(it)
		delete(q.items, h.id)
	}
}

// applyPut applies a put read back from the log: a delivery, or a later
// copy of one, which keeps the state of the earlier one. A damaged copy
// leaves an intact earlier one in place. The
// dedup keys of a damaged put are not remembered: a repeat brings the
// delivery whole.
func (q *Queue) applyPut(seg *segment, off int64, h header, meta []byte, whole bool) {
	it := &item{id: h.id, seg: seg, off: off, size: h.size(), bodyLen: int64(h.bodyLen)}
	old := q.items[h.id]
	if !whole {
		it.damage = bodyDamage(h.id)
		if checksum(meta) != h.metaSum {
			it.damage = recordDamage(h.id)
		}
		if old != nil && old.damage == nil {
			q.damaged.Add(1)
			q.log(slog.LevelError, "diskqueue: damaged copy of a delivery ignored; the earlier copy is kept", "id", h.id)
			return
		}
	}
	if old != nil {
		old.seg.drop(old)
	}
	q.items[h.id] = it
	seg.add(it)
	if checksum(meta) != h.metaSum {
		return
	}
	d, stored, err := decodeMeta(h.id, meta)
	if err != nil {
		it.damage = err
		return
	}
	it.partition, it.received, it.attempt, it.lastError = d.Partition, d.ReceivedAt, d.Attempt, d.LastError
	if old != nil {
		// A copy forward: the records of its state that follow it may be
		// cut off, while the earlier copy's state was synced.
		it.attempt, it.lastError, it.dead = old.attempt, old.lastError, old.dead
	}
	if q.keys.window > 0 && stored > 0 && it.damage == nil {
		for _, k := range d.DedupKeys() {
			r := keyRef{k, stored + q.keys.window}
			seg.keys = append(seg.keys, r)
			if r.until > time.Now().UnixNano() {
				q.keys.add(r.key, r.until)
			}
		}
	}
}

// schedule counts what the log holds and schedules the pending deliveries
// in arrival order. A damaged delivery is dead-lettered (but for NoCreate,
// where Take does it).
func (q *Queue) schedule() {
	ids := make([]uint64, 0, len(q.items))
	for id := range q.items {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		it := q.items[id]
		q.bytes += it.bodyLen
		switch {
		case it.dead:
			q.dead++
		case it.damage != nil && !q.opts.NoCreate:
			q.pending++ // killed counts it out
			reason := q.logBurial(it, it.damage)
			q.gather(tDead, id, []byte(reason), nil, 0, nil, nil)
			q.killed(it, reason)
		default:
			q.pending++
			q.sched.Add(id, it.partition)
		}
	}
}
