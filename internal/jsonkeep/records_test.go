package jsonkeep

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type base struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// fuller embeds base, whose fields it promotes, and hides base's name.
type fuller struct {
	base
	Name  string                     `json:"full_name"`
	Bio   *string                    `json:"bio"`
	Extra map[string]json.RawMessage `json:"-"`
}

func TestEmbeddedFieldsArePromoted(t *testing.T) {
	in := `{"id": "7", "name": "ann", "full_name": "Ann Smith", "bio": null, "x": 1}`
	var v fuller
	require.NoError(t, Decode([]byte(in), &v))
	assert.Equal(t, 7, v.ID)
	assert.Equal(t, "ann", v.base.Name)
	assert.Equal(t, "Ann Smith", v.Name)
	out, err := Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id": 7, "name": "ann", "full_name": "Ann Smith", "bio": null, "x": 1}`, string(out))
}

type vote struct {
	Up    bool                       `json:"up?" alias:"up"`
	Extra map[string]json.RawMessage `json:"-"`
}

func TestAliasIsWrittenAsRead(t *testing.T) {
	for _, in := range []string{`{"up?": true}`, `{"up": true}`, `{"up": true, "up?": true}`} {
		var v vote
		require.NoError(t, Decode([]byte(in), &v), in)
		assert.True(t, v.Up, in)
		out, err := Encode(&v)
		require.NoError(t, err)
		assert.JSONEq(t, `{"up?": true, "up": true}`, string(out), "both spellings, whichever came")
		assertRoundTrip(t, &v)
	}
	var v vote
	err := Decode([]byte(`{"up": "maybe"}`), &v)
	require.Error(t, err)
	assert.JSONEq(t, `"maybe"`, string(v.Extra["up"]), "kept under the key it came under")
	out, err := Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"up": "maybe"}`, string(out))

	out, err = Encode(&vote{Up: true})
	require.NoError(t, err)
	assert.JSONEq(t, `{"up?": true, "up": true}`, string(out), "built in code: the same")
}

type quietHolder struct {
	ID    int                        `json:"id"`
	Opts  inner                      `json:"opts" jsonkeep:"quiet"`
	Loud  inner                      `json:"loud"`
	Extra map[string]json.RawMessage `json:"-"`
}

func TestQuietFieldKeepsWithoutError(t *testing.T) {
	var v quietHolder
	require.NoError(t, Decode([]byte(`{"id": 1, "opts": {"n": [1]}}`), &v))
	assert.JSONEq(t, `[1]`, string(v.Opts.Extra["n"]), "the value is kept in the nested record")
	require.NoError(t, Decode([]byte(`{"id": 1, "opts": []}`), &v))
	assert.JSONEq(t, `[]`, string(v.Extra["opts"]), "a value that is no object is kept by the holder")
	out, err := Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id": 1, "opts": [], "loud": {"n": 0}}`, string(out))
	assertRoundTrip(t, &v)

	err = Decode([]byte(`{"id": 1, "loud": {"n": [1]}}`), &v)
	var errs Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	assert.Equal(t, "loud.n", errs[0].Path)
}

func TestUnmarshalLists(t *testing.T) {
	var list []*inner
	require.NoError(t, Unmarshal([]byte(`[{"n": 1}, {"n": "2", "x": true}]`), &list))
	require.Len(t, list, 2)
	assert.Equal(t, 2, list[1].N)
	assert.JSONEq(t, `true`, string(list[1].Extra["x"]))

	var vals []inner
	require.NoError(t, Unmarshal([]byte(`[]`), &vals))
	assert.NotNil(t, vals, "[] is an empty list, not nil")
	require.NoError(t, Unmarshal([]byte(`null`), &vals))
	assert.Nil(t, vals)

	err := Unmarshal([]byte(`[{"n": 1}, {"n": [2]}]`), &list)
	var errs Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	assert.Equal(t, "[1].n", errs[0].Path, "a value that does not fit is reported with its index")
	assert.Len(t, list, 2, "and the rest is decoded")

	assert.Error(t, Unmarshal([]byte(`{"n": 1}`), &list), "an object is not a list")
	assert.Error(t, Unmarshal([]byte(`[{"n": 1}`), &list), "truncated")

	var plain []int // not records: encoding/json decodes them
	require.NoError(t, Unmarshal([]byte(`[1, 2]`), &plain))
	assert.Equal(t, []int{1, 2}, plain)
}

func TestUnmarshalCostsNoAllocationOfItsOwn(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	page := []byte(`[{"n": 1}, {"n": 2}, {"n": 3}]`)
	var list []inner
	require.NoError(t, Unmarshal(page, &list))
	allocs := testing.AllocsPerRun(100, func() {
		list = list[:0]
		if err := Unmarshal(page, &list); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "records without pointers into a list with room")
}

func TestManyFieldsWithAliases(t *testing.T) {
	fields := make([]reflect.StructField, 0, 131)
	for i := range 130 {
		tag := fmt.Sprintf(`json:"f%d"`, i)
		if i == 129 {
			tag += ` alias:"g129"`
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(tag)})
	}
	fields = append(fields, reflect.StructField{Name: "Extra", Type: reflect.TypeFor[map[string]json.RawMessage](), Tag: `json:"-"`})
	v := reflect.New(reflect.StructOf(fields))
	in := `{"f0": 0, "f70": 70, "g129": 129}`
	require.NoError(t, Decode([]byte(in), v.Interface()))
	assert.Equal(t, 129, v.Elem().Field(129).Interface())
	out, err := Encode(v.Interface())
	require.NoError(t, err)
	assert.Contains(t, string(out), `"g129":129`, "the alias")
	assertRoundTrip(t, v.Interface())
}

// person embeds a record that has its own Extra: the outer Extra is the one
// that holds the object's keys.
type person struct {
	inner
	Bio   string                     `json:"bio"`
	Extra map[string]json.RawMessage `json:"-"`
}

func TestEmbeddedRecordsExtraIsNotTheOuters(t *testing.T) {
	var p person
	require.NoError(t, Decode([]byte(`{"n": 3, "bio": "b", "x": 1}`), &p))
	assert.Equal(t, 3, p.N)
	assert.JSONEq(t, `1`, string(p.Extra["x"]), "the outer Extra")
	assert.Nil(t, p.inner.Extra)
	out, err := Encode(&p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 3, "bio": "b", "x": 1}`, string(out))

	out, err = Encode(&person{Bio: "c"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 0, "bio": "c"}`, string(out), "built in code: every field")
}

// TestAnonymousStructWithExtra: a struct without methods keeps unknown keys
// in its Extra field, and encodes every field.
func TestAnonymousStructWithExtra(t *testing.T) {
	var v struct {
		N     int                        `json:"n"`
		Extra map[string]json.RawMessage `json:"-"`
	}
	require.NoError(t, Decode([]byte(`{"x": [1]}`), &v))
	assert.JSONEq(t, `[1]`, string(v.Extra["x"]))
	out, err := Encode(&v)
	require.NoError(t, err)
	assert.JSONEq(t, `{"n": 0, "x": [1]}`, string(out))
}

// assertRoundTrip checks that v, a pointer to a decoded struct, encodes to
// JSON that decodes to a value equal to it.
func assertRoundTrip(t *testing.T, v any) {
	t.Helper()
	out, err := Encode(v)
	require.NoError(t, err)
	again := reflect.New(reflect.TypeOf(v).Elem())
	_ = Decode(out, again.Interface()) // the same field errors, if any
	assert.Equal(t, v, again.Interface(), "%s", out)
}
