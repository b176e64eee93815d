package bench

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/collabsvc/collab"
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
			return b // FlexBool → bool, FlexInt and the levels → int…
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
