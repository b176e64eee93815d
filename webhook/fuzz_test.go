package webhook

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

var fuzzKinds = []Kind{KindPush, KindTagPush, KindIssue, KindMergeRequest, KindNote, KindBuild, KindWikiPage, ""}

// seedPayloads adds every test payload to f's corpus, once per kind index.
func seedPayloads(f *testing.F) {
	for _, dir := range []string{"testdata/spec", "testdata/payloads"} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for i, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i), b)
		}
	}
}

// FuzzParsePayload: any body under any kind decodes to an event or an error,
// never a panic; an event always re-encodes, and decoding that again gives
// no hard error.
func FuzzParsePayload(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		h := http.Header{}
		if kind := fuzzKinds[int(k)%len(fuzzKinds)]; kind != "" {
			h.Set(HeaderEvent, string(kind))
		}
		ev, err := ParsePayload(h, body)
		var de *DecodeError
		switch {
		case ev == nil && err == nil:
			t.Fatal("no event and no error")
		case ev == nil:
			return
		case err != nil && !errors.As(err, &de):
			t.Fatalf("an event with a non-field error: %v", err)
		}
		if _, raw := ev.(*RawEvent); raw {
			return
		}
		out, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		again, err := ParsePayload(h, out)
		if again == nil {
			t.Fatalf("re-encoded event does not decode: %v\n%s", err, out)
		}
	})
}

// FuzzRoundTrip: when a body decodes with no error, re-encoding it loses
// no key and changes no value (in the sense of sameJSON).
func FuzzRoundTrip(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := fuzzKinds[int(k)%(len(fuzzKinds)-1)]
		ev, err := ParsePayload(http.Header{HeaderEvent: {string(kind)}}, body)
		if err != nil || !json.Valid(body) {
			return
		}
		out, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		if diffs := sameJSON(body, out); len(diffs) > 0 {
			t.Fatalf("round trip changed %v\nin:  %s\nout: %s", diffs, body, out)
		}
	})
}
