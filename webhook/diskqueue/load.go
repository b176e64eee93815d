package diskqueue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// prepare makes dir, owner only (with noCreate, checks that it holds a
// queue), and locks it.
func prepare(dir string, noCreate bool) (*os.File, error) {
	if noCreate {
		segs, _ := filepath.Glob(filepath.Join(dir, "log-*.seg"))
		if len(segs) == 0 {
			if fi, err := os.Stat(filepath.Join(dir, legacyFile)); err == nil && fi.Size() > 0 {
				return nil, fmt.Errorf("%w: %s was written by an earlier version; open the queue once without NoCreate to carry it over", ErrNoQueue, filepath.Join(dir, legacyFile))
			}
			return nil, fmt.Errorf("%w: %s holds no log-*.seg file", ErrNoQueue, dir)
		}
	} else {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("diskqueue: queue directory: %w", err)
		}
		// Bodies can hold private data: owner only, also for a directory
		// that existed.
		if err := os.Chmod(dir, 0o700); err != nil {
			return nil, fmt.Errorf("diskqueue: queue directory: %w", err)
		}
	}
	return takeLock(dir)
}

// takeLock locks dir itself, so that a queue opened with NoCreate, which
// creates no file, is held alike. It waits a second for another process to
// let go.
func takeLock(dir string) (*os.File, error) {
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
// dedup keys, reads the checkpoints, carries over a queue of an earlier
// version, and schedules the pending deliveries in arrival order.
func (q *Queue) load() error {
	names, _ := filepath.Glob(filepath.Join(q.dir, "log-*.seg"))
	slices.Sort(names)
	for _, name := range names {
		if err := q.replay(name); err != nil {
			return err
		}
	}
	if !q.opts.NoCreate {
		// Segments being made ahead of time when a crash came.
		stale, _ := filepath.Glob(filepath.Join(q.dir, "log-*.seg.new"))
		for _, name := range stale {
			_ = os.Remove(name)
		}
	}
	if len(q.segs) == 0 {
		seg, err := createSegment(q.dir, 1, 0)
		if err != nil {
			return err
		}
		q.segs = append(q.segs, seg)
	}
	if !q.opts.NoCreate {
		q.prepare(q.head().num + 1)
	}
	now := time.Now().UnixNano()
	keyNames, _ := filepath.Glob(filepath.Join(q.dir, "keys-*.seg"))
	for _, name := range keyNames {
		if err := q.loadKeyFile(name, now); err != nil {
			return err
		}
	}
	if err := q.loadCheckpoints(); err != nil {
		return err
	}
	if !q.opts.NoCreate {
		if err := q.carryOver(); err != nil {
			return err
		}
	}
	q.schedule()
	return nil
}

// replay reads a segment and applies its records. A record that does not
// read is skipped up to the next one that does, and counted as damage;
// at the end of a segment it is a write cut short, and cut off (but for
// NoCreate).
func (q *Queue) replay(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil && q.opts.NoCreate {
		f, err = os.Open(path)
	}
	if err != nil {
		return fmt.Errorf("diskqueue: opening %s: %w", path, err)
	}
	data, err := os.ReadFile(path)
	if err == nil && (len(data) < segHeaderSize || !strings.HasPrefix(string(data), segMagic)) {
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
	off := q.replayRecords(seg, data)
	seg.size = off
	if !q.opts.NoCreate && !allZero(data[off:]) {
		if err := f.Truncate(off); err != nil {
			return fmt.Errorf("diskqueue: cutting a torn record off %s: %w", path, err)
		}
	}
	return nil
}

// replayRecords applies the records of a segment and returns where they
// end: at the zeros it was filled with, or at a write cut short. Only the
// segment written to when a crash came can end so, but the segments made
// ahead of time may follow it.
func (q *Queue) replayRecords(seg *segment, data []byte) int64 {
	off := int64(segHeaderSize)
	for off < int64(len(data)) {
		h, err := decodeHeader(data[off:])
		if err == nil && off+h.size() <= int64(len(data)) {
			if torn(data, off, h) {
				return off
			}
			q.apply(seg, off, h, data[off+headerSize:off+headerSize+int64(h.metaLen)])
			off += h.size()
			continue
		}
		if err == nil || allZero(data[off:]) {
			// A whole header whose record runs past the end is a write cut
			// short; zeros are what the segment was filled with.
			return off
		}
		next := nextRecord(data, off+1)
		if next < 0 {
			q.cutOff(seg, data, off)
			return off
		}
		q.damaged.Add(1)
		q.log(slog.LevelError, "diskqueue: damaged bytes skipped in the log", "segment", filepath.Base(seg.path), "offset", off, "bytes", next-off)
		off = next
	}
	return off
}

// cutOff reports the bytes past the last record that reads, which are cut
// off. Less than a header is a write cut short by a crash; more is damage
// as far as anyone can tell, since a write cut short leaves whole headers.
func (q *Queue) cutOff(seg *segment, data []byte, off int64) {
	end := int64(len(bytes.TrimRight(data[off:], "\x00"))) + off
	if end-off < headerSize {
		return
	}
	q.damaged.Add(1)
	q.log(slog.LevelError, "diskqueue: bytes that do not read cut off the end of the log", "segment", filepath.Base(seg.path), "offset", off, "bytes", end-off)
}

// torn reports whether the record at off, whose header reads, is the last
// of the log and was cut short: a part of it fails its checksum and only
// zeros follow.
func torn(data []byte, off int64, h header) bool {
	meta, end := off+headerSize+int64(h.metaLen), off+h.size()
	if !allZero(data[end:]) { // stops at the next record's first byte: cheap
		return false
	}
	whole := checksum(data[off+headerSize:meta]) == h.metaSum && (h.typ != tPut || checksum(data[meta:end]) == h.bodySum)
	return !whole
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

// nextRecord returns the offset of the first whole record at or after from,
// or -1.
func nextRecord(data []byte, from int64) int64 {
	for p := from; p+headerSize <= int64(len(data)); p++ {
		h, err := decodeHeader(data[p:])
		if err == nil && p+h.size() <= int64(len(data)) && checksum(data[p+headerSize:p+headerSize+int64(h.metaLen)]) == h.metaSum {
			return p
		}
	}
	return -1
}

// apply applies a record read back from the log.
func (q *Queue) apply(seg *segment, off int64, h header, meta []byte) {
	q.nextID = max(q.nextID, h.id)
	if h.typ == tPut {
		q.applyPut(seg, off, h, meta)
		return
	}
	it := q.items[h.id]
	if it == nil {
		return // about a delivery whose put is in a segment removed since
	}
	intact := checksum(meta) == h.metaSum
	if !intact {
		q.damaged.Add(1)
		q.log(slog.LevelError, "diskqueue: damaged state record; read as an attempt made", "id", h.id)
	}
	switch h.typ {
	case tLease:
		if n, k := binary.Uvarint(meta); intact && k > 0 {
			it.attempt = int(n)
		} else {
			it.attempt++
		}
	case tRetry, tDead:
		it.lastError = string(meta)
		if !intact {
			it.lastError = recordDamage(h.id).Error()
		}
		it.dead = it.dead || h.typ == tDead
	case tAck, tDrop:
		it.seg.drop(it)
		delete(q.items, h.id)
	}
}

// applyPut applies a put read back from the log: a delivery, or a later
// copy of one.
func (q *Queue) applyPut(seg *segment, off int64, h header, meta []byte) {
	it := &item{id: h.id, seg: seg, off: off, size: h.size(), bodyLen: int64(h.bodyLen)}
	if old := q.items[h.id]; old != nil {
		old.seg.drop(old)
	}
	q.items[h.id] = it
	seg.add(it)
	if checksum(meta) != h.metaSum {
		it.damage = recordDamage(h.id)
		return
	}
	d, stored, err := decodeMeta(h.id, meta)
	if err != nil {
		it.damage = err
		return
	}
	it.partition, it.received, it.attempt, it.lastError = d.Partition, d.ReceivedAt, d.Attempt, d.LastError
	if q.keys.window > 0 && stored > 0 {
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
// in arrival order. A delivery whose fields did not read is dead-lettered
// (but for NoCreate, where Take does it).
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
			q.damaged.Add(1)
			q.log(slog.LevelError, "diskqueue: damaged delivery dead-lettered; it is not handed to a callback",
				"id", id, "kind", "", "key", "", "attempt", it.attempt, "reason", it.damage.Error())
			q.pending++ // killed counts it out
			reason := it.damage.Error()
			q.record(tDead, id, []byte(reason), nil, 0, nil, nil)
			q.killed(it, reason)
		default:
			q.pending++
			q.s.Add(id, it.partition)
		}
	}
}
