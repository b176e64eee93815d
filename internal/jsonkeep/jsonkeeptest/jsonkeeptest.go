// Package jsonkeeptest helps tests compare decoded records with records
// built in code.
package jsonkeeptest

import (
	"encoding/json"
	"reflect"

	"github.com/collabsvc/collab/internal/jsonkeep"
)

var keepType = reflect.TypeFor[jsonkeep.Keep]()

// Forget clears, in v and every value it reaches, the record of which keys
// were decoded, so that a decoded record equals the same record built in
// code. v must be a pointer.
func Forget(v any) { forget(reflect.ValueOf(v)) }

func forget(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			forget(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			forget(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if k := it.Value().Kind(); k == reflect.Pointer || k == reflect.Slice {
				forget(it.Value())
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if f.Type() == keepType && f.CanSet() {
				k := f.Addr().Interface().(*jsonkeep.Keep)
				*k = jsonkeep.Keep{Extra: k.Extra}
				continue
			}
			forget(f)
		}
	}
}

// Forgotten returns a copy of v with Forget applied, for values that are
// not pointers. Pointers inside v are shared, and forgotten in place.
func Forgotten(v any) any {
	if v == nil {
		return nil
	}
	p := reflect.New(reflect.TypeOf(v))
	p.Elem().Set(reflect.ValueOf(v))
	forget(p)
	return p.Elem().Interface()
}

// UnknownKey is the key WithKeyEverywhere adds: no record has a field for it.
const UnknownKey = "zz_unknown_key"

// WithKeyEverywhere returns v, JSON decoded into any, with UnknownKey added
// to every object, holding an object of its own.
func WithKeyEverywhere(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{UnknownKey: map[string]any{"kept": []any{json.Number("1"), "two", nil}}}
		for k, e := range v {
			m[k] = WithKeyEverywhere(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = WithKeyEverywhere(e)
		}
		return a
	}
	return v
}
