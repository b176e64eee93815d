package redisqueue

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// A delivery is stored as a hash whose fields hold each value once:
//
//	m    what names the delivery, as JSON (meta below)
//	b    the body, byte for byte
//	r    the API record of a synthesized event, byte for byte
//	c    the checksums of m, b and r: three CRC-32C values in hex
//	n, e the attempts started and the last error, which change as it is
//	     handled and so stay outside the checksums
//
// Entries written by earlier versions keep the whole delivery as JSON in a
// field j (the body in base64); they are still read.

// castagnoli is the CRC-32C table; the CPU computes it in hardware on
// amd64 and arm64.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// meta is what names a delivery, apart from its body and record.
type meta struct {
	Key         string       `json:"key"`
	StateKey    string       `json:"state_key,omitempty"`
	Partition   string       `json:"partition,omitempty"`
	Kind        webhook.Kind `json:"kind"`
	ReceivedAt  time.Time    `json:"received_at"`
	Header      http.Header  `json:"headers"`
	Synthesized bool         `json:"synthesized,omitempty"`
}

// stored is a delivery's hash fields, as the scripts write and read them.
type stored struct {
	m, b, r, c string // new format
	j          string // old format: the whole delivery as JSON
}

// encode returns the fields of d to store.
func encode(d *webhook.Delivery) (stored, error) {
	m, err := json.Marshal(meta{Key: d.Key, StateKey: d.StateKey, Partition: d.Partition, Kind: d.Kind,
		ReceivedAt: d.ReceivedAt, Header: d.Header, Synthesized: d.Synthesized})
	if err != nil {
		return stored{}, fmt.Errorf("redisqueue: encoding the delivery: %w", err)
	}
	s := stored{m: string(m), b: string(d.Body), r: string(d.Record)}
	s.c = checksums(s.m, s.b, s.r)
	return s, nil
}

func checksums(parts ...string) string {
	out := make([]byte, 0, 8*len(parts))
	for _, p := range parts {
		out = fmt.Appendf(out, "%08x", crc32.Checksum([]byte(p), castagnoli))
	}
	return string(out)
}

// decode rebuilds a delivery from its stored fields. An error names the
// damage: which value fails its checksum, or what does not decode.
func decode(s stored) (*webhook.Delivery, error) {
	d := new(webhook.Delivery)
	if s.m == "" && s.j != "" {
		if err := json.Unmarshal([]byte(s.j), d); err != nil {
			return nil, fmt.Errorf("the stored delivery (old format) does not decode: %v", err)
		}
		return d, nil
	}
	if len(s.c) != 3*8 {
		return nil, fmt.Errorf("its checksums are missing or cut (%q)", s.c)
	}
	for i, part := range []struct{ name, v string }{{"metadata", s.m}, {"body", s.b}, {"record", s.r}} {
		if checksums(part.v) != s.c[8*i:8*i+8] {
			return nil, fmt.Errorf("the stored %s fails its checksum", part.name)
		}
	}
	var m meta
	if err := json.Unmarshal([]byte(s.m), &m); err != nil {
		return nil, fmt.Errorf("the stored metadata does not decode: %v", err)
	}
	d.Key, d.StateKey, d.Partition, d.Kind = m.Key, m.StateKey, m.Partition, m.Kind
	d.ReceivedAt, d.Header, d.Synthesized = m.ReceivedAt, m.Header, m.Synthesized
	d.Body = []byte(s.b)
	if s.r != "" {
		d.Record = []byte(s.r)
	}
	return d, nil
}

// dedupMark is the value of a dedup key: a checksum of its name, so that a
// damaged value, or a value under a damaged name, is told from a sound
// one. Earlier versions stored "1".
func dedupMark(key string) string {
	return "k" + checksums(key)
}

// soundMark reports whether v is a dedup key's value written for key.
func soundMark(key, v string) bool { return v == dedupMark(key) || v == "1" }
