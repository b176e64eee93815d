package jsonkeep

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// Encode writes the struct v points to as a JSON object, from its value
// alone: equal values write the same bytes, however they were made. Every
// field is written (omitempty is ignored, so that a key that arrived as null
// or 0 is written back), under its name and under its alias too, when it
// has one. A zero field whose key is in Extra (a null, or a value that did
// not fit) writes the Extra value instead; the other extra keys follow in
// sorted order.
func Encode(v any) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	c := codecOf(rv.Type())
	e := encoder{buf: make([]byte, 0, 256), extra: c.extraOf(rv)}
	e.buf = append(e.buf, '{')
	if len(e.extra) > 0 {
		e.written = make(map[string]bool, len(c.fields))
	}
	for i := range c.fields {
		if err := e.field(&c.fields[i], rv.FieldByIndex(c.fields[i].index)); err != nil {
			return nil, err
		}
	}
	e.extras()
	return append(e.buf, '}'), nil
}

// encoder is the encoding of one struct.
type encoder struct {
	buf     []byte
	extra   map[string]json.RawMessage
	written map[string]bool // the fields that replace a kept value
}

// field writes f, whose value is fv, unless Extra holds its value.
func (e *encoder) field(f *field, fv reflect.Value) error {
	if fv.IsZero() && f.keptIn(e.extra) {
		return nil
	}
	b, err := json.Marshal(fv.Interface())
	if err != nil {
		return fmt.Errorf("%s: %w", f.name, err)
	}
	e.buf = appendKey(e.buf, f.name)
	e.buf = append(e.buf, b...)
	if f.alias != "" {
		e.buf = appendKey(e.buf, f.alias)
		e.buf = append(e.buf, b...)
	}
	if e.written != nil {
		// The value held now replaces what was kept under either key.
		e.written[f.name] = true
		e.written[f.alias] = f.alias != ""
	}
	return nil
}

// extras writes the extra keys that no field replaced, in sorted order.
func (e *encoder) extras() {
	keys := make([]string, 0, len(e.extra))
	for k := range e.extra {
		if !e.written[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.buf = appendKey(e.buf, k)
		if len(e.extra[k]) == 0 {
			e.buf = append(e.buf, "null"...)
			continue
		}
		e.buf = append(e.buf, e.extra[k]...)
	}
}
