package jsonkeep

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTextIsWhatEncodingJSONReads: the decoder's own unescaping gives the
// string encoding/json gives, escapes, surrogates and invalid UTF-8
// included.
func TestTextIsWhatEncodingJSONReads(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, `""`, `"\"\\\/\b\f\n\r\t"`, `"caf\u00e9 \u00E9"`, `"\u0026\u003c\u2028"`,
		`"\ud83d\ude00 pair"`, `"\ud83d alone"`, `"\ude00 low alone"`, `"\ud83d\u0041 high then not low"`,
		`"\ud83d\ud83d\ude00 high, then a pair"`, "\"bad \xff byte\"", "\"cut \xe2\x82 rune\"",
		"\"surrogate in UTF-8 \xed\xa0\x80\"", `"end \ud83d"`, "\"mixed \xc3\xa9 \\u00e9 \xff\"",
	} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(raw), &want), raw)
		assert.Equal(t, want, string(unquote([]byte(raw))), raw)
		s := scanner{strs: map[string]string{}}
		assert.Equal(t, want, s.text([]byte(raw)), raw)
	}
}

// FuzzText: for any string the scanner accepts, the text is encoding/json's.
func FuzzText(f *testing.F) {
	for _, s := range []string{`"a\u00e9"`, `"\ud800\udc00"`, "\"\xff\"", `"\\\""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		s := scanner{data: raw, strs: map[string]string{}}
		if len(raw) == 0 || raw[0] != '"' || s.value() == nil || s.pos != len(raw) {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatalf("%q: the scanner took it, encoding/json: %v", raw, err)
		}
		if got := s.text(raw); got != want || !utf8.ValidString(got) {
			t.Fatalf("%q: text %q, encoding/json %q", raw, got, want)
		}
	})
}

type pointy struct {
	A     *string                    `json:"a"`
	B     *string                    `json:"b"`
	N     *int                       `json:"n"`
	One   *inner                     `json:"one"`
	Extra map[string]json.RawMessage `json:"-"`
}

// TestPointeesAreTheirOwn: the values of an object's pointer fields share
// one allocation, yet each is its own variable, and a duplicate key
// leaves the last value.
func TestPointeesAreTheirOwn(t *testing.T) {
	var v pointy
	require.NoError(t, Decode([]byte(`{"a":"x","b":"x","n":"","one":{"n":1},"one":{"n":2},"n":3}`), &v))
	require.NotNil(t, v.A)
	require.NotNil(t, v.B)
	assert.NotSame(t, v.A, v.B)
	*v.A = "edited"
	assert.Equal(t, "x", *v.B)
	assert.Equal(t, 3, *v.N)
	assert.Equal(t, &inner{N: 2}, v.One)

	var w pointy
	require.NoError(t, Decode([]byte(`{"a":null,"n":" "}`), &w))
	assert.Equal(t, pointy{}, w, "null and a blank number are nil")

	if raceEnabled {
		return // allocations are not counted under the race detector
	}
	body := []byte(`{"a":"some text","b":"more text","n":7,"one":{"n":1}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if err := Decode(body, &v); err != nil {
			t.Fatal(err)
		}
	})
	assert.Equal(t, 3.0, allocs, "one for the pointees, one for each string")
}

// TestEqualStringsAreMadeOnce: within one decoding, a short string that
// repeats is allocated once; the next decoding shares nothing with it.
func TestEqualStringsAreMadeOnce(t *testing.T) {
	page := []byte(`[{"name":"same text"},{"name":"same text"},{"name":"same text"},{"name":"other text"}]`)
	var list []outer
	require.NoError(t, Unmarshal(page, &list))
	assert.Equal(t, "same text", list[2].Name)
	assert.Equal(t, "other text", list[3].Name)
	if !raceEnabled { // allocations are not counted under the race detector
		allocs := testing.AllocsPerRun(100, func() {
			list = list[:0]
			if err := Unmarshal(page, &list); err != nil {
				t.Fatal(err)
			}
		})
		assert.Equal(t, 2.0, allocs, "one string for each distinct value")
	}

	long := strings.Repeat("x", maxShared+1)
	require.NoError(t, Unmarshal([]byte(`[{"name":"`+long+`"},{"name":"`+long+`"}]`), &list))
	assert.Equal(t, long, list[1].Name)

	st := states.Get().(*state)
	defer states.Put(st)
	assert.Empty(t, st.strs, "a pooled state remembers no string")
}
