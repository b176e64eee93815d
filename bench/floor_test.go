package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The floor decodes into structs with the SDK records' fields and JSON tags
// but standard types only, as a program using net/http and encoding/json
// alone would declare them: time.Time for timestamps, *string for dates
// (time.Time cannot decode "2016-02-01"), bool and int for the flexible
// scalars and the level types. The types are derived from the records, so the
// floor keeps every field the records gain.

var (
	sdkPkg  = reflect.TypeFor[collab.Time]().PkgPath()
	sdkTime = reflect.TypeFor[collab.Time]()
)

// dateKeys are the keys whose values are dates rather than timestamps.
var dateKeys = map[string]bool{"due_date": true}

// floorOf returns the floor type for an SDK type.
func floorOf(t reflect.Type) reflect.Type { return floorType(t, map[reflect.Type]bool{}) }

func floorType(t reflect.Type, open map[reflect.Type]bool) reflect.Type {
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(floorType(t.Elem(), open))
	case reflect.Slice:
		return reflect.SliceOf(floorType(t.Elem(), open))
	case reflect.Array:
		return reflect.ArrayOf(t.Len(), floorType(t.Elem(), open))
	case reflect.Map:
		return reflect.MapOf(floorType(t.Key(), open), floorType(t.Elem(), open))
	}
	switch {
	case t.PkgPath() != sdkPkg:
		return t // already standard: string, int, time.Time, json.RawMessage…
	case t == sdkTime:
		return reflect.TypeFor[time.Time]()
	case t.Kind() != reflect.Struct:
		if b, ok := basicTypes[t.Kind()]; ok {
			return b // the levels → int…
		}
		panic(fmt.Sprintf("bench: no standard type for %v", t))
	case open[t]:
		panic(fmt.Sprintf("bench: %v contains itself; the floor cannot be derived", t))
	}
	open[t] = true
	defer delete(open, t)
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue // encoding/json ignores it too
		}
		ft := floorType(f.Type, open)
		if key, _, _ := strings.Cut(f.Tag.Get("json"), ","); dateKeys[key] {
			ft = reflect.TypeFor[string]()
			if f.Type.Kind() == reflect.Pointer {
				ft = reflect.TypeFor[*string]()
			}
		}
		fields = append(fields, reflect.StructField{Name: f.Name, Type: ft, Tag: f.Tag, Anonymous: f.Anonymous})
	}
	return reflect.StructOf(fields)
}

var basicTypes = map[reflect.Kind]reflect.Type{
	reflect.Bool: reflect.TypeFor[bool](), reflect.String: reflect.TypeFor[string](),
	reflect.Int: reflect.TypeFor[int](), reflect.Int8: reflect.TypeFor[int8](), reflect.Int16: reflect.TypeFor[int16](),
	reflect.Int32: reflect.TypeFor[int32](), reflect.Int64: reflect.TypeFor[int64](),
	reflect.Uint: reflect.TypeFor[uint](), reflect.Uint8: reflect.TypeFor[uint8](), reflect.Uint16: reflect.TypeFor[uint16](),
	reflect.Uint32: reflect.TypeFor[uint32](), reflect.Uint64: reflect.TypeFor[uint64](),
	reflect.Float32: reflect.TypeFor[float32](), reflect.Float64: reflect.TypeFor[float64](),
}

// TestFloorDecodesWhatTheRecordsDo: the floor reads the same data from each
// fixture as the SDK's records, and holds no SDK type.
func TestFloorDecodesWhatTheRecordsDo(t *testing.T) {
	srv := newServer(t)
	hc := &http.Client{Transport: transport()}
	for _, bc := range cases {
		floor := floorOf(bc.record)
		assertStandard(t, floor)
		sdk, std := reflect.New(bc.record), reflect.New(floor)
		require.NoError(t, rawGet(context.Background(), hc, srv.URL+bc.path, sdk.Interface()))
		require.NoError(t, rawGet(context.Background(), hc, srv.URL+bc.path, std.Interface()))
		// What the records write is read into the floor's types again, to
		// be written as the floor writes it.
		sdkJSON, err := json.Marshal(sdk.Interface())
		require.NoError(t, err)
		again := reflect.New(floor)
		require.NoError(t, json.Unmarshal(sdkJSON, again.Interface()))
		againJSON, err := json.Marshal(again.Interface())
		require.NoError(t, err)
		stdJSON, err := json.Marshal(std.Interface())
		require.NoError(t, err)
		assert.JSONEq(t, redactSecrets(string(stdJSON), sdk.Elem()), string(againJSON), bc.name)
	}
}

func assertStandard(t *testing.T, typ reflect.Type) {
	t.Helper()
	switch typ.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		assertStandard(t, typ.Elem())
	case reflect.Map:
		assertStandard(t, typ.Key())
		assertStandard(t, typ.Elem())
	case reflect.Struct:
		require.NotEqual(t, sdkPkg, typ.PkgPath(), "%v is the SDK's", typ)
		if typ.Name() == "" {
			for i := range typ.NumField() {
				assertStandard(t, typ.Field(i).Type)
			}
		}
	default:
		require.NotEqual(t, sdkPkg, typ.PkgPath(), "%v is the SDK's", typ)
	}
}

// redactSecrets replaces in text each credential that record holds, as the
// records write them: a collab.Secret encodes as collab.Redacted.
func redactSecrets(text string, record reflect.Value) string {
	switch record.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !record.IsNil() {
			return redactSecrets(text, record.Elem())
		}
	case reflect.Struct:
		for i := range record.NumField() {
			text = redactSecrets(text, record.Field(i))
		}
	case reflect.Slice:
		for i := range record.Len() {
			text = redactSecrets(text, record.Index(i))
		}
	case reflect.String:
		if s := record.String(); record.Type() == reflect.TypeFor[collab.Secret]() && s != "" {
			quoted, _ := json.Marshal(s)
			return strings.ReplaceAll(text, string(quoted), `"`+collab.Redacted+`"`)
		}
	}
	return text
}
