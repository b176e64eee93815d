package jsonkeep

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	N     int                        `json:"n"`
	Extra map[string]json.RawMessage `json:"-"`
	seen  Fields
}

func (v *inner) UnmarshalJSON(b []byte) error { return Decode(b, v, &v.Extra, &v.seen) }
func (v inner) MarshalJSON() ([]byte, error)  { return Encode(&v, v.Extra, v.seen) }

type outer struct {
	Name  string                     `json:"name"`
	Count *int                       `json:"count"`
	Flag  bool                       `json:"flag,omitempty"`
	Items []*inner                   `json:"items"`
	One   *inner                     `json:"one"`
	Extra map[string]json.RawMessage `json:"-"`
	seen  Fields
}

func (v *outer) UnmarshalJSON(b []byte) error { return Decode(b, v, &v.Extra, &v.seen) }
func (v outer) MarshalJSON() ([]byte, error)  { return Encode(&v, v.Extra, v.seen) }

func TestRoundTripKeepsKeys(t *testing.T) {
	in := `{"name":null,"count":null,"items":[{"n":1,"x":true},{"n":"2"}],"later":{"a":[1]}}`
	var v outer
	require.NoError(t, json.Unmarshal([]byte(in), &v))
	assert.Nil(t, v.Count)
	assert.Equal(t, 2, v.Items[1].N, "a number sent as a string")
	assert.JSONEq(t, `true`, string(v.Items[0].Extra["x"]))
	out, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":null,"count":null,"items":[{"n":1,"x":true},{"n":2}],"later":{"a":[1]}}`, string(out),
		"the same keys come back; absent keys stay absent")
}

func TestBuiltInCodeWritesEveryField(t *testing.T) {
	out, err := json.Marshal(outer{Name: "a"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"a","count":null,"items":null,"one":null}`, string(out), "omitempty fields only when set")
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
	assert.JSONEq(t, `{"name":"x","count":"many","one":{"n":[1]},"items":[{"n":1},{"n":{}}],"name ":"y"}`, string(out))
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
	assert.JSONEq(t, `{"count":null,"one":{"n":""}}`, string(out), "a plain number keeps its blank string")
}
