// Package jsonkeep decodes and encodes JSON objects into structs without
// losing a key: keys with no field are kept verbatim, the keys an object
// carried are remembered so that re-encoding writes back exactly those, and a
// value that does not fit its field is reported with its path while the rest
// of the object still decodes.
//
// A struct opts in with two one-line methods:
//
//	func (p *T) UnmarshalJSON(b []byte) error { return jsonkeep.Decode(b, p, &p.Extra, &p.fields) }
//	func (p T) MarshalJSON() ([]byte, error)  { return jsonkeep.Encode(&p, p.Extra, p.fields) }
//
// where Extra is a map[string]json.RawMessage tagged `json:"-"` and fields is
// an unexported Fields.
package jsonkeep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Fields records which known keys a decoded object carried. The zero value
// means the value was built in code, and every field is written.
type Fields struct{ set uint64 }

const decodedBit = 1 << 63

// has reports whether the decoded object carried the field with index i of
// its type's field list. It is always false for values built in code.
func (f Fields) has(i int) bool { return f.set&(1<<i) != 0 }

// Decoded reports whether the value came from Decode.
func (f Fields) Decoded() bool { return f.set&decodedBit != 0 }

// FieldError is one value that could not be decoded into its field. The raw
// value is kept among the object's extra keys, so nothing is lost.
type FieldError struct {
	Path  string // dotted path from the top of the payload, e.g. merge_request.last_commit.timestamp
	Value string // the raw JSON value, shortened
	Err   error
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v (value %s)", e.Path, e.Err, e.Value)
}

func (e *FieldError) Unwrap() error { return e.Err }

// Errors lists every field of one payload that could not be decoded. The
// payload's other fields decoded normally.
type Errors []*FieldError

func (e Errors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Error()
	}
	return strings.Join(parts, "; ")
}

// ErrStrayKey is reported for a key that differs from a known key only by
// surrounding white space; its value stays among the extra keys.
var ErrStrayKey = errors.New("key has stray white space; value kept under that key")

type field struct {
	name      string
	index     int
	omitEmpty bool
}

var cache sync.Map // reflect.Type -> []field

func fieldsOf(t reflect.Type) []field {
	if f, ok := cache.Load(t); ok {
		return f.([]field)
	}
	var out []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || sf.Anonymous || tag == "-" || tag == "" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out = append(out, field{name: name, index: i, omitEmpty: strings.Contains(opts, "omitempty")})
	}
	if len(out) > 63 {
		panic("jsonkeep: more than 63 fields in " + t.String())
	}
	cache.Store(t, out)
	return out
}

// Decode fills the struct v points to from the JSON object data. Keys with no
// field go to *extra; *seen records the keys present. A value that does not
// fit is reported in the returned Errors and kept in *extra; every other
// field is still decoded. A body that is not an object is a plain error.
func Decode(data []byte, v any, extra *map[string]json.RawMessage, seen *Fields) error {
	if isNull(data) {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("expected a JSON object, got %s", te.Value)
		}
		return err
	}
	rv := reflect.ValueOf(v).Elem()
	rv.SetZero()
	var errs Errors
	var set uint64 = decodedBit
	known := fieldsOf(rv.Type())
	for i, f := range known {
		raw, ok := m[f.name]
		if !ok {
			continue
		}
		fv := rv.Field(f.index)
		if !nilable(fv.Kind()) && (isNull(raw) || isBlank(raw) && scalar(fv.Kind())) {
			continue // no value for a field that cannot say so: kept verbatim among the extra keys
		}
		delete(m, f.name)
		soft, hard := decodeValue(raw, rv.Field(f.index).Addr())
		errs = append(errs, prefix(f.name, soft)...)
		if hard != nil {
			rv.Field(f.index).SetZero()
			hard.Path = join(f.name, hard.Path)
			errs = append(errs, hard)
			m[f.name] = raw
			continue
		}
		set |= 1 << i
	}
	for k, raw := range m {
		trimmed := strings.TrimSpace(k)
		if trimmed != k && slices.ContainsFunc(known, func(f field) bool { return f.name == trimmed }) {
			errs = append(errs, &FieldError{Path: strconv.Quote(k), Value: short(raw), Err: ErrStrayKey})
		}
	}
	if len(m) > 0 {
		*extra = m
	}
	*seen = Fields{set}
	if len(errs) > 0 {
		slices.SortFunc(errs, func(a, b *FieldError) int { return strings.Compare(a.Path, b.Path) })
		return errs
	}
	return nil
}

// decodeValue decodes raw into the value ptr points to. Soft errors leave a
// partly decoded value worth keeping; a hard error means the value is unusable.
func decodeValue(raw json.RawMessage, ptr reflect.Value) (Errors, *FieldError) {
	t := ptr.Elem().Type()
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 && isArray(raw) {
		return decodeSlice(raw, ptr)
	}
	err := json.Unmarshal(raw, ptr.Interface())
	if err == nil {
		return nil, nil
	}
	var soft Errors
	if errors.As(err, &soft) {
		return soft, nil
	}
	if lenient(raw, ptr) {
		return nil, nil
	}
	return nil, &FieldError{Value: short(raw), Err: err}
}

func decodeSlice(raw json.RawMessage, ptr reflect.Value) (Errors, *FieldError) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &FieldError{Value: short(raw), Err: err}
	}
	s := reflect.MakeSlice(ptr.Elem().Type(), len(items), len(items))
	var errs Errors
	for i, item := range items {
		soft, hard := decodeValue(item, s.Index(i).Addr())
		at := "[" + strconv.Itoa(i) + "]"
		if hard != nil {
			hard.Path = at + dotted(hard.Path)
			return nil, hard
		}
		for _, fe := range soft {
			fe.Path = at + dotted(fe.Path)
		}
		errs = append(errs, soft...)
	}
	ptr.Elem().Set(s)
	return errs, nil
}

// lenient accepts a number or a bool sent as a JSON string ("42", "true"),
// and an empty string as null, for number and bool fields.
func lenient(raw json.RawMessage, ptr reflect.Value) bool {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	s = strings.TrimSpace(s)
	t := ptr.Elem().Type()
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if !scalar(base.Kind()) {
		return false
	}
	if base.Kind() == reflect.Bool {
		if b, err := strconv.ParseBool(s); err == nil {
			s = strconv.FormatBool(b)
		}
	}
	if s == "" {
		s = "null"
	}
	fresh := reflect.New(t)
	if json.Unmarshal([]byte(s), fresh.Interface()) != nil {
		return false
	}
	ptr.Elem().Set(fresh.Elem())
	return true
}

// Encode writes the struct v points to as a JSON object: for a decoded value
// exactly the keys it carried, otherwise every field (omitempty fields only
// when set), then the extra keys in sorted order.
func Encode(v any, extra map[string]json.RawMessage, seen Fields) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range fieldsOf(rv.Type()) {
		fv := rv.Field(f.index)
		if seen.Decoded() && !seen.has(i) || !seen.Decoded() && f.omitEmpty && fv.IsZero() {
			continue
		}
		if _, dup := extra[f.name]; dup {
			continue
		}
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		writeKey(&buf, f.name)
		buf.Write(b)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		writeKey(&buf, k)
		if len(extra[k]) == 0 {
			buf.WriteString("null")
			continue
		}
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeKey(buf *bytes.Buffer, k string) {
	if buf.Len() > 1 {
		buf.WriteByte(',')
	}
	b, _ := json.Marshal(k) // a string always marshals
	buf.Write(b)
	buf.WriteByte(':')
}

func prefix(name string, errs Errors) Errors {
	for _, fe := range errs {
		fe.Path = join(name, fe.Path)
	}
	return errs
}

func join(name, rest string) string {
	if rest == "" {
		return name
	}
	if strings.HasPrefix(rest, "[") {
		return name + rest
	}
	return name + "." + rest
}

func dotted(rest string) string {
	if rest == "" || strings.HasPrefix(rest, "[") {
		return rest
	}
	return "." + rest
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// isBlank reports whether raw is a JSON string of white space only.
func isBlank(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == ""
}

// scalar reports whether k is a number or bool kind, which lenient accepts
// from a string.
func scalar(k reflect.Kind) bool {
	return k == reflect.Bool || k >= reflect.Int && k <= reflect.Float64
}

func nilable(k reflect.Kind) bool {
	return k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface
}

func isArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

// short returns raw JSON cut to a readable length, on a rune boundary.
func short(raw json.RawMessage) string {
	const max = 60
	s := string(bytes.TrimSpace(raw))
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
