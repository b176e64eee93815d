package webhook

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbeRefusesWhatItCannotTell: the probe hands a body to the full
// decoder when it is not a valid JSON object, or when a value it reads is
// in a form it does not take.
func TestProbeRefusesWhatItCannotTell(t *testing.T) {
	issue := func(attrs string) string { return `{"object_kind":"issue","object_attributes":{` + attrs + `}}` }
	for name, body := range map[string]string{
		"empty":                 ``,
		"null":                  `null`,
		"array":                 `[]`,
		"not closed":            `{"a":1`,
		"data after":            `{"a":1} x`,
		"trailing comma":        `{"a":1,}`,
		"bad literal":           `{"a":nul}`,
		"bad number":            `{"a":01}`,
		"bad fraction":          `{"a":1.}`,
		"bad exponent":          `{"a":1e}`,
		"control character":     "{\"a\":\"x\ny\"}",
		"bad escape":            `{"a":"\x"}`,
		"short unicode escape":  `{"a":"\u12"}`,
		"unterminated string":   `{"a":"x}`,
		"key not a string":      `{a:1}`,
		"no colon":              `{"a" 1}`,
		"escaped key":           `{"obj\u0065ct_attributes":{"id":1}}`,
		"key with space":        `{" object_attributes":{"id":1}}`,
		"id as an object":       issue(`"id":{}`),
		"id as a fraction":      issue(`"id":7.5`),
		"id out of range":       issue(`"id":99999999999999999999`),
		"id twice":              issue(`"id":7,"id":8`),
		"attributes twice":      `{"object_attributes":{"id":7},"object_attributes":{"id":8}}`,
		"attributes not object": `{"object_attributes":[1]}`,
		"time not a string":     issue(`"id":7,"updated_at":5`),
		"time not a time":       issue(`"id":7,"updated_at":"soon"`),
		"too deep":              `{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	} {
		_, ok := probeIdentity(KindIssue, []byte(body))
		assert.False(t, ok, name)
	}
	for name, body := range map[string]string{
		"escaped ref": `{"ref":"refs\/heads\/main","after":"a"}`,
		"bad UTF-8":   "{\"ref\":\"\xff\",\"after\":\"a\"}",
	} {
		_, ok := probeIdentity(KindPush, []byte(body))
		assert.False(t, ok, name)
	}
}

// TestProbeReadsWhatNamesAnEvent covers the values of each kind, null
// included, and what it skips on the way.
func TestProbeReadsWhatNamesAnEvent(t *testing.T) {
	skipped := `"x":[true,false,null,-1.5e+3,"a\"\\\/\b\f\n\r\t\u00e9",{}],"y":{"z":[]},`
	for _, c := range []struct {
		kind           Kind
		body           string
		key, partition string
	}{
		{KindPush, `{` + skipped + `"project_id":3,"ref":"refs/heads/main","before":"b","after":"a"}`, "push/3/refs/heads/main/b/a", "push/3/refs/heads/main"},
		{KindTagPush, ` { "project_id" : 3 , "ref" : "v1" , "after" : "a" } `, "tag_push/3/v1//a", ""},
		{KindBuild, `{"build_id":9,` + skipped + `"build_status":"failed"}`, "build/9/failed", "build/9"},
		{KindIssue, `{"object_attributes":{` + skipped + `"id":7,"updated_at":"2016-07-01T10:00:00+02:00"}}`, "issue/7/2016-07-01T08:00:00Z/", "issue/7"},
		{KindMergeRequest, `{"object_attributes":{"id":7,"updated_at":null}}`, "body/", "merge_request/7"},
		{KindMergeRequest, `{"object_attributes":{"id":"7"}}`, "body/", "merge_request/7"}, // as the decoder reads it
		{KindNote, `{"object_attributes":{"id":5,"noteable_type":"Issue","noteable_id":40},"issue":{"id":41,"iid":2}}`, "note/5", "issue/41"},
		{KindNote, `{"object_attributes":{"id":5,"noteable_type":"MergeRequest","noteable_id":40},"issue":null}`, "note/5", "merge_request/40"},
		{KindNote, `{"object_attributes":null,"merge_request":{"id":8}}`, "body/", "merge_request/8"},
		{KindWikiPage, `{"object_attributes":{"id":1}}`, "body/", ""},
	} {
		id, ok := probeIdentity(c.kind, []byte(c.body))
		require.True(t, ok, c.body)
		assert.True(t, strings.HasPrefix(id.key([]byte(c.body)), c.key), "%s: %s", c.body, id.key([]byte(c.body)))
		assert.Equal(t, c.partition, id.partition(), c.body)
	}
}

// FuzzProbe: a body the probe takes is one the full decoder takes, and both
// give it the same key and partition.
func FuzzProbe(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := fuzzKinds[int(k)%len(fuzzKinds)]
		id, ok := probeIdentity(kind, body)
		if !ok {
			return
		}
		ev, err := ParsePayload(http.Header{HeaderEvent: {string(kind)}}, body)
		if ev == nil {
			t.Fatalf("the probe took a body the decoder refuses: %v", err)
		}
		full := identityOf(ev)
		if full.key(body) != id.key(body) || full.partition() != id.partition() || full.stateKey() != id.stateKey() {
			t.Fatalf("probe %+v, decoder %+v", id, full)
		}
	})
}

// BenchmarkProbe measures what the Handler does to a delivery before it
// stores it: read its identity, then build its record.
func BenchmarkProbe(b *testing.B) {
	body, err := os.ReadFile("testdata/spec/issue.json")
	if err != nil {
		b.Fatal(err)
	}
	header := http.Header{"Content-Type": {"application/json"}, HeaderEvent: {string(KindIssue)}, HeaderToken: {"secret"}}
	b.Run("identity", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for range b.N {
			if _, ok := probeIdentity(KindIssue, body); !ok {
				b.Fatal("no identity")
			}
		}
	})
	id, _ := probeIdentity(KindIssue, body)
	b.Run("record", func(b *testing.B) {
		b.ReportAllocs()
		now := time.Now()
		for range b.N {
			probedDelivery(header, body, id, now)
		}
	})
}
