// Package jsonkeep is the one decoder of the SDK's records and webhook
// events. It reads a JSON object into a struct in a single pass over the
// bytes, without losing a key:
//
//   - keys with no field are kept verbatim in the struct's Extra field
//     (map[string]json.RawMessage, tagged `json:"-"`), when it has one;
//   - the server's lenient scalars are read one way: numbers sent as strings,
//     flags sent as "true", 1, "yes" or "on", and null or "" for no value;
//   - a value that does not fit its field is reported with its path and kept
//     in Extra, while the rest of the object still decodes;
//   - Encode writes from the value alone, so that equal values encode alike:
//     every field (omitempty is ignored, so that a key that arrived as null
//     or 0 comes back), under its alias too, and the keys kept in Extra.
//     Kept values are stored compact, as json.Marshal writes them, so that a
//     record decoded, encoded and decoded again equals the first.
//
// A record is a struct with a field Extra map[string]json.RawMessage
// `json:"-"`. It opts in with two methods, which internal/cmd/genrecords
// writes for every record of a package:
//
//	func (p *T) UnmarshalJSON(b []byte) error { return jsonkeep.Public[collab.FieldErrors](jsonkeep.Decode(b, p)) }
//	func (p T) MarshalJSON() ([]byte, error)  { return jsonkeep.Encode(&p) }
//
// Unmarshal reads a record, or a list of them, in one pass over the whole
// body; the client decodes every response with it. Structs nested in a
// record are decoded in the same pass, and the fields of an embedded struct
// are promoted as encoding/json promotes them. A field tagged alias:"name"
// also reads the key name, for servers that spell a key two ways, and is
// written under both. A field tagged jsonkeep:"quiet" reports no error for
// a value that does not fit, in it or in the records nested in it: the
// value is kept in an Extra all the same.
//
// A record is always read this way, nested or through Unmarshal, without
// calling its UnmarshalJSON, unless its Extra field is tagged
// jsonkeep:"self": a type whose UnmarshalJSON does more (choosing between
// two shapes, say). Likewise a record nested in another is written in the
// same pass as the one holding it, without calling its MarshalJSON, unless
// its Extra is tagged jsonkeep:"self" or jsonkeep:"marshal": a type whose
// MarshalJSON does more (redacting a secret, say). genrecords refuses a
// record with a MarshalJSON written by hand and neither tag.
package jsonkeep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// FieldError is one value that could not be decoded into its field. The raw
// value is kept among the object's extra keys, so nothing is lost. The
// root package exports a type of the same fields, collab.FieldError; As
// converts to it.
type FieldError struct {
	Path  string // dotted path from the top of the payload, e.g. merge_request.last_commit.timestamp
	Value string // the raw JSON value, shortened
	Err   error  // why it did not fit, or ErrStrayKey
}

// Error returns the path, the reason and the value.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v (value %s)", e.Path, e.Err, e.Value)
}

// Unwrap returns Err.
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

// Decode fills the struct v points to from the JSON object data. A value
// that does not fit is reported in the returned Errors and kept in Extra;
// every other field is still decoded. A body that is not JSON, or not an
// object, is a plain error. null leaves v as it is.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("jsonkeep: Decode needs a pointer to a struct, got %T", v)
	}
	return run(data, rv.Elem(), nil)
}

// Unmarshal decodes data into v. A record (a struct with an Extra field),
// a pointer to one, or a slice of records or of pointers to them, is decoded as Decode does,
// in one pass over the whole of data; anything else is handed to
// json.Unmarshal.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return json.Unmarshal(data, v)
	}
	t := rv.Elem().Type()
	switch {
	case isKept(t):
		return run(data, rv.Elem(), nil)
	case t.Kind() == reflect.Pointer && isKept(t.Elem()):
		return run(data, rv.Elem(), topDecoder(t))
	case t.Kind() == reflect.Slice && (isKept(t.Elem()) || t.Elem().Kind() == reflect.Pointer && isKept(t.Elem().Elem())):
		return run(data, rv.Elem(), topDecoder(t))
	}
	return json.Unmarshal(data, v)
}

// isKept reports whether t is a record that jsonkeep reads itself: a
// struct with a field Extra map[string]json.RawMessage, not tagged
// jsonkeep:"self" (a type whose own UnmarshalJSON does more).
func isKept(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	sf, ok := t.FieldByName("Extra")
	return ok && len(sf.Index) == 1 && sf.Type == extraType && sf.Tag.Get("jsonkeep") != "self"
}

// fieldErrorType is a struct type with the fields of FieldError.
type fieldErrorType interface {
	~struct {
		Path  string
		Value string
		Err   error
	}
}

// fieldList is a list of *E that is an error.
type fieldList[E fieldErrorType] interface {
	~[]*E
	error
}

// Public returns err with Errors converted to L, the public list type of
// the SDK's field errors, so that callers can errors.As it; any other error
// is returned as it is.
func Public[L fieldList[E], E fieldErrorType](err error) error {
	errs, ok := err.(Errors)
	if !ok {
		return err
	}
	out := make(L, len(errs))
	for i, fe := range errs {
		e := E(*fe)
		out[i] = &e
	}
	return out
}

var tops sync.Map // reflect.Type -> decodeFunc

// topDecoder returns the decodeFunc of t, a pointer to a record or a list
// of records, built once.
func topDecoder(t reflect.Type) decodeFunc {
	if d, ok := tops.Load(t); ok {
		return d.(decodeFunc)
	}
	d, _ := tops.LoadOrStore(t, decoderOf(t))
	return d.(decodeFunc)
}

// state is one decoding's scanner and errors, pooled so that decoding a
// record costs no allocation of its own.
type state struct {
	s       scanner
	errs    Errors
	scratch []byte
	strs    map[string]string
}

var states = sync.Pool{New: func() any { return new(state) }}

// maxPooledErrs bounds the error list a pooled state keeps for reuse: a
// payload with a great many bad values does not pin memory for later ones.
const maxPooledErrs = 64

// reset forgets the last decoding: its body and its errors, which the
// caller may hold (they are returned) but the pool must not.
func (st *state) reset() {
	if cap(st.s.scratch) <= maxPooledScratch {
		st.scratch = st.s.scratch[:0]
	}
	st.s = scanner{}
	clear(st.errs)
	st.errs = st.errs[:0]
	if cap(st.errs) > maxPooledErrs {
		st.errs = nil
	}
	clear(st.strs)
}

// maxPooledScratch bounds the buffer of escaped text a pooled state keeps.
const maxPooledScratch = 4 << 10

// run decodes data into v: an object into a struct when dec is nil, or with
// dec.
func run(data []byte, v reflect.Value, dec decodeFunc) error {
	st := states.Get().(*state)
	defer func() {
		st.reset()
		states.Put(st)
	}()
	if st.strs == nil {
		st.strs = make(map[string]string, 32)
	}
	st.s = scanner{data: data, scratch: st.scratch, strs: st.strs}
	s := &st.s
	s.ws()
	var raw []byte
	var err error
	switch {
	case dec != nil:
		err = dec(s, v, &st.errs)
	case s.isNull():
		s.pos += 4
	case s.pos < len(data) && data[s.pos] != '{':
		raw = s.value()
	default:
		codecOf(v.Type()).decode(s, v, &st.errs)
	}
	s.ws()
	switch {
	case s.err != nil:
		return s.err
	case s.pos < len(data):
		return s.syntax("data after the top-level value")
	case raw != nil:
		return fmt.Errorf("expected a JSON object, got %s", short(raw))
	case err != nil:
		v.SetZero()
		return err
	case len(st.errs) > 0:
		errs := slices.Clone(st.errs)
		slices.SortFunc(errs, func(a, b *FieldError) int { return strings.Compare(a.Path, b.Path) })
		return errs
	}
	return nil
}

func join(name, rest string) string {
	switch {
	case rest == "":
		return name
	case rest[0] == '[':
		return name + rest
	}
	return name + "." + rest
}

func dotted(rest string) string {
	if rest == "" || rest[0] == '[' {
		return rest
	}
	return "." + rest
}

// short returns raw JSON cut to a readable length, on a rune boundary.
func short(raw []byte) string {
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
