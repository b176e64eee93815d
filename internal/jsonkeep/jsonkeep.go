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
//   - a blank field of type Fields (`_ jsonkeep.Fields`) remembers which
//     keys were present, so that Encode writes back what the value holds
//     now: every field that was present or has been set since, and no field
//     that was absent and is still zero.
//
// A struct opts in with two one-line methods:
//
//	func (p *T) UnmarshalJSON(b []byte) error { return jsonkeep.Decode(b, p) }
//	func (p T) MarshalJSON() ([]byte, error)  { return jsonkeep.Encode(&p) }
//
// Unmarshal reads such a struct, or a list of them, in one pass over the
// whole body; the client decodes every response with it. Structs nested in
// such a struct are decoded in the same pass, and the fields of an embedded
// struct are promoted as encoding/json promotes them. A field
// tagged alias:"name" also reads the key name, for servers that spell a key
// two ways, and writes it back under the name it came under. A field tagged
// jsonkeep:"quiet" reports no error for a value that does not fit, in it or
// in the records nested in it: the value is kept in an Extra all the same.
//
// A struct with a Fields field is always read this way, nested or through
// Unmarshal, without calling its UnmarshalJSON: a type whose UnmarshalJSON
// does more (choosing between two shapes, say) has Extra but no Fields.
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

// Fields records which known keys a decoded object carried, and which of
// them came under their alias. The zero value means the value was built in
// code, and every field is written.
type Fields struct {
	decoded      bool
	set, aliased uint64      // fields 0 to 63: present under the name, under the alias
	more         *moreFields // fields 64 and up, for large types only
}

type moreFields struct{ set, aliased []uint64 }

// mark records field i as present, under its alias or its name.
func (f *Fields) mark(i int, alias bool) {
	if i < 64 {
		if alias {
			f.aliased |= 1 << i
		} else {
			f.set |= 1 << i
		}
		return
	}
	if f.more == nil {
		f.more = new(moreFields)
	}
	w := &f.more.set
	if alias {
		w = &f.more.aliased
	}
	n := i/64 - 1
	for len(*w) <= n {
		*w = append(*w, 0)
	}
	(*w)[n] |= 1 << (i % 64)
}

// has reports whether field i was present under its name and under its alias.
func (f *Fields) has(i int) (named, aliased bool) {
	if i < 64 {
		return f.set&(1<<i) != 0, f.aliased&(1<<i) != 0
	}
	if f.more == nil {
		return false, false
	}
	n := i/64 - 1
	bit := func(w []uint64) bool { return n < len(w) && w[n]&(1<<(i%64)) != 0 }
	return bit(f.more.set), bit(f.more.aliased)
}

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

// Unmarshal decodes data into v. A record (a struct with a Fields field),
// or a slice of records or of pointers to them, is decoded as Decode does,
// in one pass over the whole of data; anything else is handed to
// json.Unmarshal.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return json.Unmarshal(data, v)
	}
	t := rv.Elem().Type()
	switch {
	case keeps(t):
		return run(data, rv.Elem(), nil)
	case t.Kind() == reflect.Slice && (keeps(t.Elem()) || t.Elem().Kind() == reflect.Pointer && keeps(t.Elem().Elem())):
		return run(data, rv.Elem(), listDecoder(t))
	}
	return json.Unmarshal(data, v)
}

// keeps reports whether t is a struct with a Fields field.
func keeps(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).Type == fieldsType {
			return true
		}
	}
	return false
}

var lists sync.Map // reflect.Type -> decodeFunc

func listDecoder(t reflect.Type) decodeFunc {
	if d, ok := lists.Load(t); ok {
		return d.(decodeFunc)
	}
	d, _ := lists.LoadOrStore(t, sliceDecoder(t))
	return d.(decodeFunc)
}

// state is one decoding's scanner and errors, pooled so that decoding a
// record costs no allocation of its own.
type state struct {
	s    scanner
	errs Errors
}

var states = sync.Pool{New: func() any { return new(state) }}

// maxPooledErrs bounds the error list a pooled state keeps for reuse: a
// payload with a great many bad values does not pin memory for later ones.
const maxPooledErrs = 64

// reset forgets the last decoding: its body and its errors, which the
// caller may hold (they are returned) but the pool must not.
func (st *state) reset() {
	st.s = scanner{}
	clear(st.errs)
	st.errs = st.errs[:0]
	if cap(st.errs) > maxPooledErrs {
		st.errs = nil
	}
}

// run decodes data into v: an object into a struct when dec is nil, or with
// dec.
func run(data []byte, v reflect.Value, dec decodeFunc) error {
	st := states.Get().(*state)
	defer func() {
		st.reset()
		states.Put(st)
	}()
	st.s = scanner{data: data}
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

// A codec is how one struct type decodes and encodes.
type codec struct {
	once   sync.Once
	typ    reflect.Type
	fields []field
	byName map[string]*field
	extra  int // index of the Extra field, or -1
	seen   int // index of the Fields field, or -1
}

type field struct {
	name      string
	alias     string // another key that also reads the field
	quiet     bool   // a value that does not fit is kept without an error
	index     []int  // in the struct, through embedded structs
	bit       int    // in Fields
	omitEmpty bool
	nilable   bool // null is a value of the field (pointer, slice, map)
	scalar    bool // a number or a bool, for which a blank string is no value
	dec       decodeFunc
}

var (
	fieldsType = reflect.TypeFor[Fields]()
	extraType  = reflect.TypeFor[map[string]json.RawMessage]()
	codecs     sync.Map // reflect.Type -> *codec
)

// codecOf returns the codec of struct type t, built on first use. Building
// does not follow nested types, so recursive types are fine.
func codecOf(t reflect.Type) *codec {
	c, ok := codecs.Load(t)
	if !ok {
		c, _ = codecs.LoadOrStore(t, &codec{typ: t})
	}
	cc := c.(*codec)
	cc.once.Do(cc.build)
	return cc
}

func (c *codec) build() {
	c.extra, c.seen = -1, -1
	c.byName = map[string]*field{}
	c.addFields(c.typ, nil)
	for i := range c.fields {
		f := &c.fields[i]
		if _, taken := c.byName[f.name]; !taken {
			c.byName[f.name] = f
		}
	}
	for i := range c.fields {
		f := &c.fields[i]
		if _, taken := c.byName[f.alias]; f.alias != "" && !taken {
			c.byName[f.alias] = f
		}
	}
}

// addFields adds the fields of struct type t, found at index path in the
// codec's type. The fields of an embedded struct are promoted, as
// encoding/json promotes them: a field of the outer type hides one of the
// same name inside. Only the top level's Extra and Fields are the codec's.
func (c *codec) addFields(t reflect.Type, path []int) {
	var embedded []reflect.StructField
	for i := range t.NumField() {
		sf := t.Field(i)
		switch {
		case path == nil && sf.Type == fieldsType:
			c.seen = i
			continue
		case path == nil && sf.Name == "Extra" && sf.Type == extraType:
			c.extra = i
			continue
		case sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "":
			embedded = append(embedded, sf)
			continue
		}
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" || tag == "" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = sf.Name
		}
		if c.has(name) {
			continue
		}
		k := sf.Type.Kind()
		c.fields = append(c.fields, field{
			name: name, alias: sf.Tag.Get("alias"), quiet: sf.Tag.Get("jsonkeep") == "quiet", index: append(slices.Clip(path), i), bit: len(c.fields),
			omitEmpty: strings.Contains(opts, "omitempty"),
			nilable:   k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface,
			scalar:    k == reflect.Bool || numberKind(k),
			dec:       decoderOf(sf.Type),
		})
	}
	for _, sf := range embedded {
		c.addFields(sf.Type, append(slices.Clip(path), sf.Index[0]))
	}
}

// keptIn reports whether extra holds a value of f, under its name or its
// alias: a null, or a value that did not fit.
func (f *field) keptIn(extra map[string]json.RawMessage) bool {
	if _, ok := extra[f.name]; ok {
		return true
	}
	_, ok := extra[f.alias]
	return ok && f.alias != ""
}

func (c *codec) has(name string) bool {
	for i := range c.fields {
		if c.fields[i].name == name {
			return true
		}
	}
	return false
}

// isRecord reports whether struct type t decodes in the same pass as the
// object holding it: it keeps its own keys (a Fields field), or it is a
// plain struct without a decoder of its own whose exported fields all carry
// a JSON name, so that reading it here finds what encoding/json would.
func isRecord(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	plain := !hasDecoder(t)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == fieldsType {
			return true
		}
		if f.Anonymous || f.IsExported() && f.Tag.Get("json") == "" {
			plain = false
		}
	}
	return plain && t.NumField() > 0
}

// decode reads an object into v, which is zeroed first. Values that do not
// fit go to errs, with paths relative to v.
func (c *codec) decode(s *scanner, v reflect.Value, errs *Errors) {
	s.ws()
	if !s.expect('{') {
		return
	}
	if s.depth++; s.depth > maxDepth {
		s.syntax("nested too deeply")
		return
	}
	defer func() { s.depth-- }()
	v.SetZero()
	var extra map[string]json.RawMessage
	seen := Fields{decoded: true}
	errStart := len(*errs) // errors from here on have paths relative to v
	for first := true; ; first = false {
		s.ws()
		if first && s.pos < len(s.data) && s.data[s.pos] == '}' {
			s.pos++
			break
		}
		key := s.key()
		if s.err != nil || !s.colon() {
			return
		}
		start := s.pos
		f := c.byName[string(key)]
		if f != nil && len(*errs) > errStart {
			dropStale(errs, errStart, f.name)
		}
		if f == nil {
			raw := s.value()
			if s.err != nil {
				return
			}
			if c.extra >= 0 {
				extra = keep(extra, string(key), raw)
			}
			if trimmed := bytes.TrimSpace(key); len(trimmed) < len(key) && c.byName[string(trimmed)] != nil {
				*errs = append(*errs, &FieldError{Path: strconv.Quote(string(key)), Value: short(raw), Err: ErrStrayKey})
			}
		} else if !f.nilable && s.isNull() || f.scalar && s.isBlank() {
			// No value for a field that cannot say so: keep it verbatim.
			raw := s.value()
			if c.extra >= 0 {
				extra = keep(extra, string(key), raw)
			}
		} else {
			fv := v.FieldByIndex(f.index)
			mark := len(*errs)
			err := f.dec(s, fv, errs)
			if s.err != nil {
				return
			}
			if err != nil {
				fv.SetZero()
				*errs = (*errs)[:mark]
				s.pos = start
				raw := s.value()
				fe, ok := err.(*FieldError)
				if !ok {
					fe = &FieldError{Value: short(raw), Err: err}
				}
				if fe.Path = join(f.name, fe.Path); !f.quiet {
					*errs = append(*errs, fe)
				}
				if c.extra >= 0 {
					extra = keep(extra, string(key), raw)
				}
			} else {
				if f.quiet {
					*errs = (*errs)[:mark]
				}
				for _, fe := range (*errs)[mark:] {
					fe.Path = join(f.name, fe.Path)
				}
				seen.mark(f.bit, string(key) != f.name)
				if extra != nil {
					delete(extra, string(key)) // a duplicate key: the last value wins
				}
			}
		}
		s.ws()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		if !s.expect('}') {
			return
		}
		break
	}
	if c.extra >= 0 && extra != nil {
		*(*map[string]json.RawMessage)(v.Field(c.extra).Addr().UnsafePointer()) = extra
	}
	if c.seen >= 0 {
		*(*Fields)(v.Field(c.seen).Addr().UnsafePointer()) = seen
	}
}

// dropStale removes from errs[from:] the errors of an earlier value of the
// field name: with a duplicate key the last value wins, and the earlier
// value is no longer kept anywhere.
func dropStale(errs *Errors, from int, name string) {
	kept := (*errs)[:from]
	for _, fe := range (*errs)[from:] {
		p := fe.Path
		if p == name || len(p) > len(name) && strings.HasPrefix(p, name) && (p[len(name)] == '.' || p[len(name)] == '[') {
			continue
		}
		kept = append(kept, fe)
	}
	clear((*errs)[len(kept):])
	*errs = kept
}

// keep stores a copy of raw under key: the caller may reuse its buffer.
func keep(m map[string]json.RawMessage, key string, raw []byte) map[string]json.RawMessage {
	if m == nil {
		m = make(map[string]json.RawMessage, 2)
	}
	m[key] = bytes.Clone(raw)
	return m
}

// Encode writes the struct v points to as a JSON object. A value built in
// code writes every field (omitempty ones only when set). A decoded value
// writes the fields that were present or are no longer zero. A zero field
// whose key is in Extra (a null, or a value that did not fit) writes the
// Extra value; the other extra keys follow in sorted order.
func Encode(v any) ([]byte, error) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	c := codecOf(rv.Type())
	var extra map[string]json.RawMessage
	var seen Fields
	if c.extra >= 0 {
		extra = rv.Field(c.extra).Interface().(map[string]json.RawMessage)
	}
	if c.seen >= 0 {
		seen = *(*Fields)(rv.Field(c.seen).Addr().UnsafePointer())
	}
	buf := make([]byte, 0, 256)
	buf = append(buf, '{')
	var written map[string]bool // the fields that replace a kept value
	if len(extra) > 0 {
		written = make(map[string]bool, len(c.fields))
	}
	for i := range c.fields {
		f := &c.fields[i]
		fv := rv.FieldByIndex(f.index)
		zero := fv.IsZero()
		if zero && f.keptIn(extra) {
			continue
		}
		named, aliased := seen.has(f.bit)
		if seen.decoded && !named && !aliased && zero || !seen.decoded && f.omitEmpty && zero {
			continue
		}
		b, err := json.Marshal(fv.Interface())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		// A key read under its alias is written back under it, and under
		// the name too when the object carried both.
		if named || !aliased {
			buf = appendKey(buf, f.name)
			buf = append(buf, b...)
		}
		if aliased {
			buf = appendKey(buf, f.alias)
			buf = append(buf, b...)
		}
		if written != nil {
			// The value held now replaces what was kept under either key.
			written[f.name] = true
			written[f.alias] = f.alias != ""
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !written[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		buf = appendKey(buf, k)
		if len(extra[k]) == 0 {
			buf = append(buf, "null"...)
			continue
		}
		buf = append(buf, extra[k]...)
	}
	return append(buf, '}'), nil
}

func appendKey(buf []byte, k string) []byte {
	if len(buf) > 1 {
		buf = append(buf, ',')
	}
	b, _ := json.Marshal(k) // a string always marshals
	buf = append(buf, b...)
	return append(buf, ':')
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
