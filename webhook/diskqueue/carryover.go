package diskqueue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/collabsvc/collab/webhook"
)

// legacyFile is the bbolt file in which earlier versions kept the queue.
const legacyFile = "queue.db"

// carryOver moves what a queue.db of an earlier version holds (deliveries
// with their ids and attempts, dead letters, dedup keys and checkpoints)
// into the log, durably, then removes it. Ids are kept, so a carry-over cut
// short by a crash is done again alike at the next open.
func (q *Queue) carryOver() (err error) {
	path := filepath.Join(q.dir, legacyFile)
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("%w: %s", ErrHeld, path)
	case err != nil:
		return fmt.Errorf("diskqueue: queue file %s is damaged (%w); move it away to start afresh", path, err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("diskqueue: queue file %s is damaged (%v); move it away to start afresh", path, p)
		}
	}()
	var recs, keys []byte
	cps := map[string][]byte{}
	err = db.View(func(tx *bolt.Tx) error {
		recs = q.legacyDeliveries(tx)
		keys = q.legacyKeys(tx)
		if b := tx.Bucket([]byte("checkpoints")); b != nil {
			return b.ForEach(func(k, v []byte) error { cps[string(k)] = append([]byte(nil), v...); return nil })
		}
		return nil
	})
	_ = db.Close()
	if err == nil {
		err = q.keepLegacy(recs, keys, cps)
	}
	if err == nil {
		if err = os.Remove(path); err == nil {
			err = syncDir(q.dir)
		}
	}
	if err != nil {
		return fmt.Errorf("diskqueue: carrying over %s: %w", path, err)
	}
	return nil
}

// keepLegacy writes the records and keys read from a queue.db, and applies
// them as if replayed.
func (q *Queue) keepLegacy(recs, keys []byte, cps map[string][]byte) error {
	if len(keys) > len(keyMagic) {
		path := filepath.Join(q.dir, keyFileName(0))
		if err := writeDurably(path, keys); err != nil {
			return err
		}
		if err := q.loadKeyFile(path, time.Now().UnixNano()); err != nil {
			return err
		}
	}
	if len(cps) > 0 {
		for k, v := range q.checkpoints {
			cps[k] = v
		}
		if err := q.saveCheckpoints(cps); err != nil {
			return err
		}
		q.checkpoints = cps
	}
	head := q.head()
	base, err := q.writeGroup(head, recs)
	if err != nil {
		return err
	}
	for off := int64(0); off < int64(len(recs)); {
		h, _ := decodeHeader(recs[off:])
		q.apply(head, base+off, h, recs[off+headerSize:off+headerSize+int64(h.metaLen)])
		off += h.size()
	}
	return nil
}

// legacyDeliveries encodes the pending and dead deliveries of a queue.db as
// records of the log. A record that does not read becomes a dead letter
// naming the damage, with its body.
func (q *Queue) legacyDeliveries(tx *bolt.Tx) []byte {
	var out []byte
	bodies := tx.Bucket([]byte("bodies"))
	for _, name := range []string{"pending", "dead"} {
		b := tx.Bucket([]byte(name))
		if b == nil {
			continue
		}
		_ = b.ForEach(func(k, v []byte) error {
			if len(k) != 8 {
				return nil
			}
			id := binary.BigEndian.Uint64(k)
			var body []byte
			if bodies != nil {
				body = bodies.Get(k)
			}
			d, sum, err := decodeLegacy(id, v)
			if err != nil {
				d = &webhook.Delivery{ID: id, LastError: err.Error()}
				q.damaged.Add(1)
				q.log(slog.LevelError, "diskqueue: damaged delivery dead-lettered; it is not handed to a callback",
					"id", id, "kind", "", "key", "", "attempt", 0, "reason", err.Error())
			}
			bodySum := checksum(body)
			if sum != nil {
				bodySum = *sum
			}
			out = appendRecord(out, tPut, id, appendMeta(nil, d, 0), body, bodySum)
			if name == "dead" || err != nil {
				out = appendRecord(out, tDead, id, []byte(d.LastError), nil, 0)
			}
			return nil
		})
	}
	return out
}

// legacyKeys encodes the dedup keys of a queue.db still within their window
// as a key file.
func (q *Queue) legacyKeys(tx *bolt.Tx) []byte {
	out := []byte(keyMagic)
	b := tx.Bucket([]byte("keys"))
	if b == nil {
		return out
	}
	now := time.Now().UnixNano()
	_ = b.ForEach(func(k, v []byte) error {
		if len(v) != 8 && (len(v) != 12 || binary.BigEndian.Uint32(v[8:]) != legacyChecksum(k, v[:8])) {
			q.keyDamage(legacyFile, "checksum mismatch")
			return nil
		}
		if until := int64(binary.BigEndian.Uint64(v)); until > now {
			out = appendKey(out, keyRef{string(k), until})
		}
		return nil
	})
	return out
}

func legacyChecksum(key, v []byte) uint32 {
	return crc32Update(crc32Update(0, key), v)
}

// decodeLegacy reads a record of a queue.db: a format byte, a CRC-32C of
// the rest and the delivery as JSON with its body's CRC-32C, or plain JSON
// for records written before checksums.
func decodeLegacy(id uint64, v []byte) (*webhook.Delivery, *uint32, error) {
	js := v
	if len(v) > 0 && v[0] != '{' {
		if len(v) < 5 || v[0] != 1 || binary.BigEndian.Uint32(v[1:]) != checksum(v[5:]) {
			return nil, nil, recordDamage(id)
		}
		js = v[5:]
	}
	r := struct {
		*webhook.Delivery
		BodySum *uint32 `json:"body_crc32c,omitempty"`
	}{Delivery: new(webhook.Delivery)}
	if err := json.Unmarshal(js, &r); err != nil || r.ID != id {
		return nil, nil, &damage{fmt.Sprintf("record %016x damaged: does not decode", id)}
	}
	return r.Delivery, r.BodySum, nil
}
