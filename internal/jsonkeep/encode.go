package jsonkeep

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Encode writes the struct v points to as a JSON object, from its value
// alone: equal values write the same bytes, however they were made. Every
// field is written (omitempty is ignored, so that a key that arrived as null
// or 0 is written back), under its name and under its alias too, when it
// has one. A zero field whose key is in Extra (a null, or a value that did
// not fit) writes the Extra value instead; the other extra keys follow in
// sorted order.
//
// The bytes are those json.Marshal would write for each field. A record
// nested in v is written in the same pass, as its generated MarshalJSON
// would write it, unless its Extra is tagged jsonkeep:"self" or
// jsonkeep:"marshal" (a type whose own MarshalJSON does more).
func Encode(v any) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	bp := buffers.Get().(*[]byte)
	buf, err := planOf(rv.Type()).append((*bp)[:0], rv)
	var out []byte
	if err == nil {
		out = slices.Clone(buf)
	}
	if cap(buf) <= maxPooledBuffer {
		*bp = buf
		buffers.Put(bp)
	}
	return out, err
}

// buffers holds the buffers records are written into before they are
// copied out at their size.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledBuffer bounds the buffer a pooled encoding keeps.
const maxPooledBuffer = 64 << 10

// An encodeFunc appends the JSON of v to buf.
type encodeFunc func(buf []byte, v reflect.Value) ([]byte, error)

// A plan is how one struct type is written: its codec's fields, each with
// its key written out and its encoder, built on first use.
type plan struct {
	once   sync.Once
	c      *codec
	fields []fieldPlan
}

type fieldPlan struct {
	f        *field
	key      []byte // `"name":`
	aliasKey []byte // `"alias":`, or nil
	enc      encodeFunc
}

var plans sync.Map // reflect.Type -> *plan

// planOf returns the plan of struct type t, built on first use. Building
// does not follow nested records, so recursive types are fine.
func planOf(t reflect.Type) *plan {
	p, ok := plans.Load(t)
	if !ok {
		p, _ = plans.LoadOrStore(t, &plan{c: codecOf(t)})
	}
	pp := p.(*plan)
	pp.once.Do(pp.build)
	return pp
}

func (p *plan) build() {
	p.fields = make([]fieldPlan, len(p.c.fields))
	for i := range p.c.fields {
		f := &p.c.fields[i]
		fp := fieldPlan{f: f, key: appendKey(nil, f.name), enc: encoderOf(p.c.typ.FieldByIndex(f.index).Type)}
		if f.alias != "" {
			fp.aliasKey = appendKey(nil, f.alias)
		}
		if fp.enc == nil {
			fp.enc = viaMarshal
		}
		p.fields[i] = fp
	}
}

// append appends struct v as an object.
func (p *plan) append(buf []byte, v reflect.Value) ([]byte, error) {
	extra := p.c.extraOf(v)
	var written map[string]bool // the fields that replace a kept value
	if len(extra) > 0 {
		written = make(map[string]bool, len(p.fields))
	}
	buf = append(buf, '{')
	first := true
	for i := range p.fields {
		fp := &p.fields[i]
		fv := v.FieldByIndex(fp.f.index)
		if len(extra) > 0 && fp.f.keptIn(extra) && fv.IsZero() {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, fp.key...)
		valueAt := len(buf)
		var err error
		if buf, err = fp.enc(buf, fv); err != nil {
			return buf, fmt.Errorf("%s: %w", fp.f.name, err)
		}
		if fp.aliasKey != nil {
			valueEnd := len(buf)
			buf = append(buf, ',')
			buf = append(buf, fp.aliasKey...)
			buf = append(buf, buf[valueAt:valueEnd]...)
		}
		if written != nil {
			// The value held now replaces what was kept under either key.
			written[fp.f.name] = true
			written[fp.f.alias] = fp.f.alias != ""
		}
	}
	buf = appendExtras(buf, extra, written, first)
	return append(buf, '}'), nil
}

// appendExtras appends the extra keys that no field replaced, in sorted
// order; first tells whether nothing was written before them.
func appendExtras(buf []byte, extra map[string]json.RawMessage, written map[string]bool, first bool) []byte {
	if len(extra) == 0 {
		return buf
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !written[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendKey(buf, k)
		if len(extra[k]) == 0 {
			buf = append(buf, "null"...)
			continue
		}
		buf = append(buf, extra[k]...)
	}
	return buf
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// encoderOf returns the encodeFunc of type t, or nil when json.Marshal
// must write the value itself: a map, an array, bytes, an interface, a
// struct that is not written as a record, a type with a text form, or one
// holding any of them. nil is then decided at the field, where
// json.Marshal sees the field's value as the old per-field encoding did.
func encoderOf(t reflect.Type) encodeFunc {
	switch {
	case t.Kind() == reflect.Interface:
		return nil
	case isInline(t):
		return recordEncoder(t)
	case t.Kind() == reflect.Pointer && isInline(t.Elem()):
		return nilOr(recordEncoder(t.Elem()))
	case t.Implements(marshalerType):
		return viaMarshaler
	case t == numberType, t.Implements(textMarshalerType),
		reflect.PointerTo(t).Implements(marshalerType), reflect.PointerTo(t).Implements(textMarshalerType):
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return appendBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return appendInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return appendUint
	case reflect.Float32, reflect.Float64:
		return appendFloat
	case reflect.String:
		return func(buf []byte, v reflect.Value) ([]byte, error) { return appendString(buf, v.String()), nil }
	case reflect.Pointer:
		if elem := encoderOf(t.Elem()); elem != nil {
			return nilOr(elem)
		}
	case reflect.Slice:
		if elem := encoderOf(t.Elem()); elem != nil && t.Elem().Kind() != reflect.Uint8 {
			return sliceEncoder(elem)
		}
	}
	return nil
}

// isInline reports whether t is a record written in the same pass as the
// record holding it: a record whose MarshalJSON is the generated one,
// which calls Encode.
func isInline(t reflect.Type) bool {
	if !isKept(t) || !t.Implements(marshalerType) {
		return false
	}
	sf, _ := t.FieldByName("Extra")
	return sf.Tag.Get("jsonkeep") != "marshal"
}

// recordEncoder writes a nested record as json.Marshal writes it through
// its MarshalJSON, with the same error. One holding kept keys goes through
// json.Marshal, which compacts and checks them (a caller may have set them).
func recordEncoder(t reflect.Type) encodeFunc {
	return func(buf []byte, v reflect.Value) ([]byte, error) {
		p := planOf(t)
		if len(p.c.extraOf(v)) > 0 {
			return viaMarshal(buf, v)
		}
		out, err := p.append(buf, v)
		if err != nil {
			return out, &json.MarshalerError{Type: t, Err: err}
		}
		return out, nil
	}
}

// nilOr writes a nil pointer as null, and otherwise what it points to
// with elem.
func nilOr(elem encodeFunc) encodeFunc {
	return func(buf []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(buf, "null"...), nil
		}
		return elem(buf, v.Elem())
	}
}

func sliceEncoder(elem encodeFunc) encodeFunc {
	return func(buf []byte, v reflect.Value) ([]byte, error) {
		if v.IsNil() {
			return append(buf, "null"...), nil
		}
		buf = append(buf, '[')
		for i := range v.Len() {
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = elem(buf, v.Index(i)); err != nil {
				return buf, err
			}
		}
		return append(buf, ']'), nil
	}
}

// viaMarshal writes v with json.Marshal.
func viaMarshal(buf []byte, v reflect.Value) ([]byte, error) {
	b, err := json.Marshal(v.Interface())
	return append(buf, b...), err
}

// viaMarshaler writes v with its MarshalJSON method. Output that
// json.Marshal would write unchanged (null, or a string with nothing to
// escape) is appended as it is; anything else goes through json.Marshal,
// which compacts, escapes and checks it.
func viaMarshaler(buf []byte, v reflect.Value) ([]byte, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return append(buf, "null"...), nil
	}
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil || !isPlain(b) {
		return viaMarshal(buf, v)
	}
	return append(buf, b...), nil
}

// isPlain reports whether b is null or a JSON string json.Marshal would
// copy as it is: nothing escaped, no byte to escape.
func isPlain(b []byte) bool {
	if string(b) == "null" {
		return true
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return false
	}
	for _, c := range b[1 : len(b)-1] {
		if c >= utf8.RuneSelf || !htmlSafe(c) {
			return false
		}
	}
	return true
}

func appendBool(buf []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendBool(buf, v.Bool()), nil
}

func appendInt(buf []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendInt(buf, v.Int(), 10), nil
}

func appendUint(buf []byte, v reflect.Value) ([]byte, error) {
	return strconv.AppendUint(buf, v.Uint(), 10), nil
}

// appendFloat writes a number as json.Marshal does (the shortest form that
// reads back, with an exponent only for very small or large values), and
// leaves infinities and NaN to json.Marshal's error.
func appendFloat(buf []byte, v reflect.Value) ([]byte, error) {
	f, bits := v.Float(), v.Type().Bits()
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return viaMarshal(buf, v)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	buf = strconv.AppendFloat(buf, f, format, -1, bits)
	if n := len(buf); format == 'e' && n >= 4 && buf[n-4] == 'e' && buf[n-3] == '-' && buf[n-2] == '0' {
		buf[n-2] = buf[n-1] // e-07 is written e-7
		buf = buf[:n-1]
	}
	return buf, nil
}

// appendString appends s quoted as json.Marshal quotes it: with <, > and &
// escaped for HTML, U+2028 and U+2029 escaped, and each invalid UTF-8 byte
// written as U+FFFD.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '\\', '"':
				buf = append(buf, '\\', c)
			case '\b':
				buf = append(buf, '\\', 'b')
			case '\f':
				buf = append(buf, '\\', 'f')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// htmlSafe reports whether ASCII byte c is written in a string as it is.
func htmlSafe(c byte) bool {
	return c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendKey appends k quoted and a colon.
func appendKey(buf []byte, k string) []byte {
	return append(appendString(buf, k), ':')
}
