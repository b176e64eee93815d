package diskqueue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/collabsvc/collab/webhook"
)

// A stored record is a format byte, a CRC-32C of the rest, and the delivery
// without its body as JSON, with the CRC-32C of the body. Records written
// before checksums (plain JSON) are still read, unchecked.
const recordV1 = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b ...[]byte) uint32 {
	var sum uint32
	for _, p := range b {
		sum = crc32.Update(sum, castagnoli, p)
	}
	return sum
}

// record is what the pending and dead buckets hold for a delivery.
type record struct {
	*webhook.Delivery
	BodySum *uint32 `json:"body_crc32c,omitempty"`
}

// encodeRecord writes d without its body, with the checksum of its body
// (nil for a record written before checksums).
func encodeRecord(d *webhook.Delivery, bodySum *uint32) ([]byte, error) {
	m := *d
	m.Body = nil
	js, err := json.Marshal(record{Delivery: &m, BodySum: bodySum})
	if err != nil {
		return nil, err
	}
	v := make([]byte, 5, 5+len(js))
	v[0] = recordV1
	binary.BigEndian.PutUint32(v[1:], checksum(js))
	return append(v, js...), nil
}

// damage names what is wrong with a stored delivery; a damaged delivery is
// never handed to a callback.
type damage struct{ what string }

func (d *damage) Error() string { return d.what }

func isDamage(err error) bool {
	var d *damage
	return errors.As(err, &d)
}

// decodeRecord reads the record stored under key k. It returns the body's
// checksum, or nil for a record written before checksums.
func decodeRecord(k, v []byte) (*webhook.Delivery, *uint32, error) {
	js := v
	if len(v) > 0 && v[0] != '{' {
		if len(v) < 5 || v[0] != recordV1 {
			return nil, nil, &damage{fmt.Sprintf("record %x damaged: unknown format", k)}
		}
		if js = v[5:]; binary.BigEndian.Uint32(v[1:]) != checksum(js) {
			return nil, nil, &damage{fmt.Sprintf("record %x damaged: checksum mismatch", k)}
		}
	}
	r := record{Delivery: new(webhook.Delivery)}
	if err := json.Unmarshal(js, &r); err != nil || len(k) != 8 || r.ID != binary.BigEndian.Uint64(k) {
		return nil, nil, &damage{fmt.Sprintf("record %x damaged: does not decode", k)}
	}
	return r.Delivery, r.BodySum, nil
}

// checkBody reports damage when body does not match the checksum kept in
// its record.
func checkBody(id uint64, body []byte, sum *uint32) error {
	switch {
	case body == nil:
		return &damage{fmt.Sprintf("body of delivery %d missing", id)}
	case sum != nil && checksum(body) != *sum:
		return &damage{fmt.Sprintf("body of delivery %d damaged: checksum mismatch", id)}
	}
	return nil
}

// A dedup entry is its expiry (unix ns) and a CRC-32C of the key and the
// expiry. Entries of 8 bytes, written before checksums, are read unchecked.
func encodeKey(key string, until int64) []byte {
	v := binary.BigEndian.AppendUint64(nil, uint64(until))
	return binary.BigEndian.AppendUint32(v, checksum([]byte(key), v))
}

// decodeKey returns the expiry of a dedup entry, or damage.
func decodeKey(key string, v []byte) (int64, error) {
	switch {
	case len(v) == 8:
	case len(v) == 12 && binary.BigEndian.Uint32(v[8:]) == checksum([]byte(key), v[:8]):
	default:
		return 0, &damage{fmt.Sprintf("dedup entry %q damaged", key)}
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }
