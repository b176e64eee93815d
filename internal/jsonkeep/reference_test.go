package jsonkeep

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// ReferenceEncode is Encode as it was first written, one json.Marshal per
// field, kept to check that the planned encoder writes the same bytes. A
// nested record goes through referenceValue, so that the comparison covers
// every level and not only the top one.
func ReferenceEncode(v any) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	c := codecOf(rv.Type())
	extra := c.extraOf(rv)
	written := map[string]bool{}
	buf := []byte{'{'}
	key := func(k string) {
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		b, _ := json.Marshal(k)
		buf = append(append(buf, b...), ':')
	}
	for i := range c.fields {
		f := &c.fields[i]
		fv := rv.FieldByIndex(f.index)
		if fv.IsZero() && f.keptIn(extra) {
			continue
		}
		b, err := referenceValue(fv)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		key(f.name)
		buf = append(buf, b...)
		if f.alias != "" {
			key(f.alias)
			buf = append(buf, b...)
		}
		written[f.name] = true
		written[f.alias] = f.alias != ""
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !written[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		key(k)
		if len(extra[k]) == 0 {
			buf = append(buf, "null"...)
			continue
		}
		buf = append(buf, extra[k]...)
	}
	return append(buf, '}'), nil
}

// referenceValue is json.Marshal of v, except that a record whose
// MarshalJSON is the generated one, alone or in a pointer or a slice, is
// written by ReferenceEncode and then compacted as json.Marshal compacts a
// MarshalJSON's output.
func referenceValue(v reflect.Value) ([]byte, error) {
	t := v.Type()
	switch {
	case isInline(t):
		b, err := ReferenceEncode(v.Interface())
		if err != nil {
			return nil, &json.MarshalerError{Type: t, Err: err}
		}
		return json.Marshal(json.RawMessage(b))
	case (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice) && !v.IsNil() && isInline(t.Elem()):
		if t.Kind() == reflect.Pointer {
			return referenceValue(v.Elem())
		}
		out := []byte{'['}
		for i := range v.Len() {
			b, err := referenceValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, b...)
		}
		return append(out, ']'), nil
	}
	return json.Marshal(v.Interface())
}
