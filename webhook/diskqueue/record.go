package diskqueue

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"slices"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// A record of the log is a header of headerSize bytes, then its meta, then
// its body. The header holds the lengths of both, the delivery's id, a
// CRC-32C of each part, the record's type, and a CRC-32C of the header
// itself, so that a damaged header is told apart from a damaged meta or
// body, and a torn tail from either.
const headerSize = 32

// The types of record.
const (
	tPut   = 1 // a delivery: its meta (see appendMeta) and its body
	tLease = 2 // an attempt begun; meta: the attempt count (uvarint)
	tRetry = 3 // an attempt failed; meta: the error
	tDead  = 4 // dead-lettered; meta: the error
	tAck   = 5 // handled: forget the delivery
	tDrop  = 6 // a dead letter deleted, or requeued under another id
	tMark  = 7 // no meta; in place of an id, how far its segment was synced
)

// Each group the writer writes begins with a mark: the bytes of its
// segment that a sync had covered by then. A record that does not read
// before a mark's offset was synced and damaged on the disk since; one
// past every mark may be a write that a power cut tore, whose Put never
// returned (see keptRecords).
func putMark(b []byte, synced int64) {
	appendRecord(b[:0], tMark, uint64(synced), nil, nil, 0)
}

// Bounds that a header read from disk must respect; past them it is damage.
const (
	maxMeta = 16 << 20
	maxBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// header is a record's header, decoded.
type header struct {
	metaLen, bodyLen uint32
	id               uint64
	metaSum, bodySum uint32
	typ              byte
}

func (h header) size() int64 { return headerSize + int64(h.metaLen) + int64(h.bodyLen) }

// appendRecord appends a record to b. bodySum is the body's checksum as
// first stored: a damaged body copied keeps failing it.
func appendRecord(b []byte, typ byte, id uint64, meta, body []byte, bodySum uint32) []byte {
	at := len(b)
	b = slices.Grow(b, headerSize+len(meta)+len(body))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(meta)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = binary.LittleEndian.AppendUint64(b, id)
	b = binary.LittleEndian.AppendUint32(b, checksum(meta))
	b = binary.LittleEndian.AppendUint32(b, bodySum)
	b = append(b, typ, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, checksum(b[at:]))
	b = append(b, meta...)
	return append(b, body...)
}

// errTorn: the header does not read; at the end of the log that is a write
// cut short by a crash.
var errTorn = errors.New("record header damaged")

func decodeHeader(b []byte) (header, error) {
	if len(b) < headerSize || binary.LittleEndian.Uint32(b[28:]) != checksum(b[:28]) {
		return header{}, errTorn
	}
	h := header{
		metaLen: binary.LittleEndian.Uint32(b[0:]),
		bodyLen: binary.LittleEndian.Uint32(b[4:]),
		id:      binary.LittleEndian.Uint64(b[8:]),
		metaSum: binary.LittleEndian.Uint32(b[16:]),
		bodySum: binary.LittleEndian.Uint32(b[20:]),
		typ:     b[24],
	}
	if h.typ < tPut || h.typ > tMark || h.metaLen > maxMeta || h.bodyLen > maxBody {
		return header{}, errTorn
	}
	return h, nil
}

// damage names what is wrong with a stored delivery; a damaged delivery is
// never handed to a callback.
type damage struct{ what string }

func (d *damage) Error() string { return d.what }

func isDamage(err error) bool {
	var d *damage
	return errors.As(err, &d)
}

func recordDamage(id uint64) error {
	return &damage{fmt.Sprintf("record %016x damaged: checksum mismatch", id)}
}

func bodyDamage(id uint64) error {
	return &damage{fmt.Sprintf("body of delivery %d damaged: checksum mismatch", id)}
}

// The meta of a put is a format byte, then the delivery's fields without
// its body, each a varint or a length-prefixed string, then its headers.
const metaV1 = 1

const (
	flagSynthesized = 1 << iota
	flagReceivedAt
)

// appendMeta encodes d without its body; stored is when the queue first
// stored it, from which its dedup keys' window runs.
func appendMeta(b []byte, d *webhook.Delivery, stored int64) []byte {
	var flags uint64
	if d.Synthesized {
		flags |= flagSynthesized
	}
	if !d.ReceivedAt.IsZero() {
		flags |= flagReceivedAt
	}
	b = append(b, metaV1)
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendVarint(b, stored)
	b = binary.AppendVarint(b, d.ReceivedAt.Unix())
	b = binary.AppendUvarint(b, uint64(d.ReceivedAt.Nanosecond()))
	for _, s := range [...]string{d.Key, d.StateKey, d.Partition, string(d.Kind), d.LastError, string(d.Record)} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(d.Attempt))
	b = binary.AppendUvarint(b, uint64(len(d.Header)))
	for name, values := range d.Header {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, uint64(len(values)))
		for _, v := range values {
			b = appendString(b, v)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// metaReader reads what appendMeta wrote; the first error sticks.
type metaReader struct {
	b   []byte
	err bool
}

func (r *metaReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *metaReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of entries, each of at least one byte.
func (r *metaReader) count() uint64 {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return 0
	}
	return n
}

func (r *metaReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// decodeMeta decodes a put's meta into a delivery, with its stored time.
func decodeMeta(id uint64, b []byte) (*webhook.Delivery, int64, error) {
	if len(b) == 0 || b[0] != metaV1 {
		return nil, 0, &damage{fmt.Sprintf("record %016x damaged: unknown format", id)}
	}
	r := metaReader{b: b[1:]}
	flags := r.uvarint()
	stored := r.varint()
	sec, nsec := r.varint(), r.uvarint()
	d := &webhook.Delivery{ID: id, Synthesized: flags&flagSynthesized != 0}
	if flags&flagReceivedAt != 0 {
		d.ReceivedAt = time.Unix(sec, int64(nsec))
	}
	d.Key, d.StateKey, d.Partition = r.string(), r.string(), r.string()
	d.Kind, d.LastError = webhook.Kind(r.string()), r.string()
	if rec := r.string(); rec != "" {
		d.Record = []byte(rec)
	}
	d.Attempt = int(r.uvarint())
	if n := r.count(); n > 0 {
		d.Header = make(http.Header, n)
		for range n {
			name := r.string()
			values := make([]string, r.count())
			for i := range values {
				values[i] = r.string()
			}
			d.Header[name] = values
		}
	}
	if r.err || len(r.b) != 0 {
		return nil, 0, &damage{fmt.Sprintf("record %016x damaged: does not decode", id)}
	}
	return d, stored, nil
}
