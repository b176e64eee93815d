package jsonkeep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	N     int                        `json:"n"`
	Extra map[string]json.RawMessage `json:"-"`
}

func (v *inner) UnmarshalJSON(b []byte) error { return Decode(b, v) }
func (v inner) MarshalJSON() ([]byte, error)  { return Encode(&v) }

type outer struct {
	Name  string                     `json:"name"`
	Count *int                       `json:"count"`
	Flag  bool                       `json:"flag,omitempty"`
	Items []*inner                   `json:"items"`
	One   *inner                     `json:"one"`
	Extra map[string]json.RawMessage `json:"-"`
}

func (v *outer) UnmarshalJSON(b []byte) error { return Decode(b, v) }
func (v outer) MarshalJSON() ([]byte, error)  { return Encode(&v) }

func TestRoundTripKeepsKeys(t *testing.T) {
	in := `{"name":null,"count":null,"items":[{"n":1,"x":true},{"n":"2"}],"later":{"a":[1]}}`
	var v outer
	require.NoError(t, json.Unmarshal([]byte(in), &v))
	assert.Nil(t, v.Count)
	assert.Equal(t, 2, v.Items[1].N, "a number sent as a string")
	assert.JSONEq(t, `true`, string(v.Items[0].Extra["x"]))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":null,"count":null,"flag":false,"items":[{"n":1,"x":true},{"n":2}],"one":null,"later":{"a":[1]}}`, string(out),
		"the keys that came, with their values, and every known field")
	assertRoundTrip(t, &v)
}

func TestBuiltInCodeWritesEveryField(t *testing.T) {
	out, err := json.Marshal(outer{Name: "a"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"a","count":null,"flag":false,"items":null,"one":null}`, string(out), "omitempty fields too")
}

func TestFieldErrorsKeepTheRest(t *testing.T) {
	var v outer
	err := json.Unmarshal([]byte(`{"name":"x","count":"many","one":{"n":[1]},"items":[{"n":1},{"n":{}}],"name ":"y"}`), &v)
	var errs Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	var paths []string
	for _, e := range errs {
		paths = append(paths, e.Path)
	}
	assert.Equal(t, []string{`"name "`, "count", "items[1].n", "one.n"}, paths)
	assert.ErrorIs(t, errs[0], ErrStrayKey)
	assert.Equal(t, "x", v.Name)
	assert.Nil(t, v.Count)
	assert.JSONEq(t, `"many"`, string(v.Extra["count"]), "the bad value is kept")
	assert.Len(t, v.Items, 2, "a list with a partly decoded element is kept")
	assert.JSONEq(t, `[1]`, string(v.One.Extra["n"]))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"x","count":"many","flag":false,"one":{"n":[1]},"items":[{"n":1},{"n":{}}],"name ":"y"}`, string(out))
	assertRoundTrip(t, &v)
}

func TestHardErrorInListKeepsTheList(t *testing.T) {
	var v outer
	err := json.Unmarshal([]byte(`{"items":[{"n":1},7]}`), &v)
	assert.ErrorContains(t, err, "items[1]")
	assert.Nil(t, v.Items)
	assert.JSONEq(t, `[{"n":1},7]`, string(v.Extra["items"]))
}

func TestNotAnObject(t *testing.T) {
	var v outer
	assert.ErrorContains(t, json.Unmarshal([]byte(`[1]`), &v), "expected a JSON object")
	var errs Errors
	assert.False(t, errors.As(json.Unmarshal([]byte(`"s"`), &v), &errs))
}

func TestShortCutsOnRuneBoundary(t *testing.T) {
	s := short(json.RawMessage(`"` + string(make([]byte, 58)) + `é…"`))
	assert.True(t, len(s) <= 64)
	assert.Contains(t, s, "…")
}

func TestBlankStringForANumber(t *testing.T) {
	var v outer
	require.NoError(t, json.Unmarshal([]byte(`{"count":" ","one":{"n":""}}`), &v))
	assert.Nil(t, v.Count, "a nullable number becomes nil")
	assert.Zero(t, v.One.N)
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"","count":null,"flag":false,"items":null,"one":{"n":""}}`, string(out), "a plain number keeps its blank string")
	assertRoundTrip(t, &v)
}

// TestEditedFieldsAreWritten: a decoded value writes what it holds now.
func TestEditedFieldsAreWritten(t *testing.T) {
	var v outer
	require.NoError(t, json.Unmarshal([]byte(`{"name":"a","flag":false,"items":null,"x":1}`), &v))
	v.Count = new(int)
	v.One = &inner{N: 3}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"a","count":0,"flag":false,"items":null,"one":{"n":3},"x":1}`, string(out),
		"edited fields are written; a present zero stays; absent zero fields stay absent")

	v.Name = ""
	out, err = json.Marshal(v)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"name":""`, "a field cleared after decoding is still written")
}

// TestEditReplacesAKeptValue: a field whose value was kept in Extra (a null,
// or a value that did not fit) writes the new value once it is set.
func TestEditReplacesAKeptValue(t *testing.T) {
	var v inner
	require.NoError(t, json.Unmarshal([]byte(`{"n":null}`), &v))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":null}`, string(out), "a null stays null")
	v.N = 4
	out, err = json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n":4}`, string(out))
}

// TestLenientScalars: the flags and numbers deployed servers send.
func TestLenientScalars(t *testing.T) {
	type flags struct {
		B  bool     `json:"b"`
		N  int      `json:"n"`
		U  uint8    `json:"u"`
		F  float64  `json:"f"`
		PB *bool    `json:"pb"`
		PN *int64   `json:"pn"`
		L  []int    `json:"l"`
		S  []string `json:"s"`
	}
	for _, in := range []string{`true`, `"true"`, `1`, `"1"`, `"t"`, `"on"`, `" YES "`, `"True"`} {
		var v flags
		require.NoError(t, Decode([]byte(`{"b":`+in+`,"pb":`+in+`}`), &v), in)
		assert.True(t, v.B, in)
		assert.True(t, *v.PB, in)
	}
	for _, in := range []string{`false`, `"false"`, `0`, `"0"`, `"f"`, `"off"`, `"No"`} {
		v := flags{B: true}
		require.NoError(t, Decode([]byte(`{"b":`+in+`}`), &v), in)
		assert.False(t, v.B, in)
	}
	var v flags
	require.NoError(t, Decode([]byte(`{"n":"-42","u":"7","f":"2.5","pn":"9","l":["1",2,null],"s":["a",null]}`), &v))
	assert.Equal(t, flags{N: -42, U: 7, F: 2.5, PN: ptr[int64](9), L: []int{1, 2, 0}, S: []string{"a", ""}}, v)
	require.NoError(t, Decode([]byte(`{"pn":"","pb":" "}`), &v))
	assert.Nil(t, v.PN)
	assert.Nil(t, v.PB)

	for _, bad := range []string{`{"b":2}`, `{"b":"maybe"}`, `{"n":1.5}`, `{"n":"x"}`, `{"u":-1}`, `{"u":256}`,
		`{"n":99999999999999999999}`, `{"f":"NaN"}`, `{"f":"0x1p3"}`, `{"n":{}}`, `{"l":[1,"a"]}`} {
		var v flags
		var errs Errors
		assert.True(t, errors.As(Decode([]byte(bad), &v), &errs), bad)
	}
}

func ptr[T any](v T) *T { return &v }

// TestSyntaxErrors: malformed JSON is a plain error, never a panic.
func TestSyntaxErrors(t *testing.T) {
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":01}`,
		`{"a":1} x`, `{"a":"` + "\x01" + `"}`, `{"n":[1,]}`, `{"a":"\u12"}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`,
		strings.Repeat(`{"a":`, maxDepth+1)} {
		var v outer
		err := Decode([]byte(bad), &v)
		var errs Errors
		assert.Error(t, err, bad)
		assert.False(t, errors.As(err, &errs), bad)
	}
}

// TestManyFields: a type with 100 fields decodes and encodes, and the
// presence of the fields past 64 is remembered.
func TestManyFields(t *testing.T) {
	fields := make([]reflect.StructField, 100)
	obj := map[string]int{}
	for i := range fields {
		name := fmt.Sprintf("f%d", i)
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + name + `"`)}
		if i%3 == 0 {
			obj[name] = i
		}
	}
	fields = append(fields, reflect.StructField{Name: "Extra", Type: reflect.TypeFor[map[string]json.RawMessage](), Tag: `json:"-"`})
	typ := reflect.StructOf(fields)
	in, err := json.Marshal(obj)
	require.NoError(t, err)
	v := reflect.New(typ)
	require.NoError(t, Decode(in, v.Interface()))
	assert.Equal(t, 99, v.Elem().Field(99).Interface())
	out, err := Encode(v.Interface())
	require.NoError(t, err)
	assert.Len(t, strings.Split(string(out), ","), 100, "every field")
	assertRoundTrip(t, v.Interface())
	v.Elem().Field(98).SetInt(5)
	out, err = Encode(v.Interface())
	require.NoError(t, err)
	assert.Contains(t, string(out), `"f98":5`)
}

// FuzzDecode: the scanner accepts exactly the JSON encoding/json accepts,
// never panics, and what decodes encodes to a fixed point.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"name":"x","count":"3","items":[{"n":1,"z":null}],"one":{"n":"2"},"flag":"on"}`,
		`{"name ":1}`, `{"items":[1]}`, `{"a":"\u00e9\ud800"}`, `[]`, `null`, `{"count":1e400}`, "{\"name\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v outer
		err := Decode(data, &v)
		var syntax *SyntaxError
		if json.Valid(data) == errors.As(err, &syntax) {
			t.Fatalf("%q: valid JSON %v, but Decode: %v", data, json.Valid(data), err)
		}
		var errs Errors
		if err != nil && !errors.As(err, &errs) {
			return
		}
		out, err := Encode(&v)
		if err != nil {
			t.Fatalf("%q: encode: %v", data, err)
		}
		var again outer
		if err := Decode(out, &again); err != nil && !errors.As(err, &errs) {
			t.Fatalf("%q encoded as %s, which does not decode: %v", data, out, err)
		}
		out2, err := Encode(&again)
		if err != nil || string(out2) != string(out) {
			t.Fatalf("%q encoded as %s, then as %s (%v)", data, out, out2, err)
		}
	})
}

// TestDuplicateKeyLastWins: with a duplicate key the last value wins, and
// an earlier value that did not fit is no longer reported, since it is no
// longer kept.
func TestDuplicateKeyLastWins(t *testing.T) {
	var v outer
	require.NoError(t, Decode([]byte(`{"count":"x","one":{"n":"y"},"items":[{"n":{}}],"count":1,"one":{"n":2},"items":[]}`), &v))
	assert.Equal(t, 1, *v.Count)
	assert.Equal(t, 2, v.One.N)
	assert.Empty(t, v.Extra)

	err := Decode([]byte(`{"count":"x","name":1,"count":null}`), &v)
	var errs Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	require.Len(t, errs, 1)
	assert.Equal(t, "name", errs[0].Path, "the other field's error stays")
	assert.Nil(t, v.Count)
	assert.NotContains(t, v.Extra, "count")

	err = Decode([]byte(`{"count":1,"count":"x"}`), &v)
	require.True(t, errors.As(err, &errs), "%v", err)
	assert.Equal(t, "count", errs[0].Path, "a last value that does not fit is reported")
	assert.JSONEq(t, `"x"`, string(v.Extra["count"]))
}

// level reads its text, so encoding/json reads it from a string.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("unknown level %q", b)
	}
	return nil
}

// TestTextUnmarshalers: a type that reads its text is read from a string,
// as encoding/json reads it, plain or behind a pointer, as a struct or not.
func TestTextUnmarshalers(t *testing.T) {
	var v struct {
		Addr  netip.Addr                 `json:"addr"`
		PAddr *netip.Addr                `json:"paddr"`
		Level level                      `json:"level"`
		Extra map[string]json.RawMessage `json:"-"`
	}
	require.NoError(t, Decode([]byte(`{"addr":"10.0.0.1","paddr":"::1","level":"high"}`), &v))
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), v.Addr)
	assert.Equal(t, netip.MustParseAddr("::1"), *v.PAddr)
	assert.Equal(t, level(2), v.Level)

	var errs Errors
	require.True(t, errors.As(Decode([]byte(`{"level":"mid"}`), &v), &errs))
	assert.Equal(t, "level", errs[0].Path)
	assert.JSONEq(t, `"mid"`, string(v.Extra["level"]))
}

type aliasVote struct {
	Up    bool                       `json:"up?" alias:"up"`
	Extra map[string]json.RawMessage `json:"-"`
}

// TestEditReplacesAValueKeptUnderAlias: a value kept under a field's alias
// is written back while the field is zero, and replaced once it is set, so
// that decoding again gives the edit.
func TestEditReplacesAValueKeptUnderAlias(t *testing.T) {
	var v aliasVote
	var errs Errors
	require.True(t, errors.As(Decode([]byte(`{"up":"maybe"}`), &v), &errs))
	out, err := Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"up":"maybe"}`, string(out), "the kept value, and no zero field beside it")

	v.Up = true
	out, err = Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"up?":true,"up":true}`, string(out), "both spellings")
	var again aliasVote
	require.NoError(t, Decode(out, &again))
	assert.True(t, again.Up, "the edit survives")
}

// TestPooledStateHoldsNothing: a decoding's state goes back to the pool
// without the body or the errors, which belong to the caller now, and
// without a list grown large by a hostile payload.
func TestPooledStateHoldsNothing(t *testing.T) {
	st := &state{s: scanner{data: []byte(`{}`)}}
	for i := range 3 {
		st.errs = append(st.errs, &FieldError{Path: fmt.Sprint(i)})
	}
	st.reset()
	assert.Nil(t, st.s.data)
	assert.Empty(t, st.errs)
	for _, fe := range st.errs[:cap(st.errs)] {
		assert.Nil(t, fe, "an error of the last decoding is still referenced")
	}
	st.errs = make(Errors, 10*maxPooledErrs)
	st.reset()
	assert.LessOrEqual(t, cap(st.errs), maxPooledErrs)
}

var freshTypes atomic.Int64

// TestFirstUseFromManyGoroutines: a type's codec and list decoder are built
// once, on first use, while many goroutines decode it; run with -race.
func TestFirstUseFromManyGoroutines(t *testing.T) {
	// A type no earlier run has used, so that its codec is built here.
	name := fmt.Sprintf("f%d", freshTypes.Add(1))
	typ := reflect.StructOf([]reflect.StructField{
		{Name: "N", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + name + `_n"`)},
		{Name: "Kids", Type: reflect.TypeFor[[]*inner](), Tag: `json:"kids"`},
		{Name: "Extra", Type: reflect.TypeFor[map[string]json.RawMessage](), Tag: `json:"-"`},
	})
	body := []byte(`[{"` + name + `_n":1,"kids":[{"n":2}],"x":3}]`)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			list := reflect.New(reflect.SliceOf(typ))
			if err := Unmarshal(body, list.Interface()); err != nil {
				t.Error(err)
				return
			}
			v := list.Elem().Index(0)
			assert.Equal(t, 1, v.Field(0).Interface())
			assert.JSONEq(t, `3`, string(v.Field(2).Interface().(map[string]json.RawMessage)["x"]))
			out, err := Encode(v.Addr().Interface())
			assert.NoError(t, err)
			assert.JSONEq(t, string(body[1:len(body)-1]), string(out))
		})
	}
	wg.Wait()
}

func TestCountElements(t *testing.T) {
	for in, want := range map[string]int{
		``: 0, `{"a":[1,2]}`: 0, `[]`: 0, ` [ ] `: 0, `[1]`: 1, `[{}, {}, {}]`: 3,
		`[{"a":[1,2,3],"b":"x,y]"}, "s,\"]", [1,[2,3]], null]`: 4,
		`[{},{},oops,{}]`: 2, // the count stops at the first syntax error
		`[1,2`:            2,
	} {
		assert.Equal(t, want, CountElements([]byte(in)), in)
	}
	body := []byte(`[` + strings.Repeat(`{},`, 999) + `{}]`)
	assert.Equal(t, 1000, CountElements(body))
	assert.Zero(t, testing.AllocsPerRun(10, func() { CountElements(body) }))
}

// TestCanonicalIsWhatMarshalWrites: a kept value is stored as json.Marshal
// writes a MarshalJSON method's output, so that encoding a record and
// decoding it again keeps the value byte for byte.
func TestCanonicalIsWhatMarshalWrites(t *testing.T) {
	for _, raw := range []string{
		`1`, `"plain"`, `{ "a" : [ 1, 2 ],
		"b":"x y\t<&>\u2028"}`, "\"\u2028\u2029 \\\" \\\\ <\"", `[ "\\u003c", {"k":"v"} ]`, `"é ü \u00e9"`,
	} {
		var want bytes.Buffer
		json.HTMLEscape(&want, compactOf(t, raw))
		assert.Equal(t, want.String(), string(canonical([]byte(raw))), raw)
	}
}

func compactOf(t *testing.T, raw string) []byte {
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(raw)))
	return b.Bytes()
}
