package jsonkeep

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// object is the decoding of one JSON object into a struct.
type object struct {
	c        *codec
	s        *scanner
	v        reflect.Value
	errs     *Errors
	errStart int // errors from here on have paths relative to v
	extra    map[string]json.RawMessage
	pointees reflect.Value // of c.pointees, allocated on first use
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
	o := object{c: c, s: s, v: v, errs: errs, errStart: len(*errs)}
	if o.members() && o.extra != nil {
		v.Field(c.extra).Set(reflect.ValueOf(o.extra))
	}
}

// members reads the members after the opening brace, and the closing one.
// It reports false on a syntax error.
func (o *object) members() bool {
	s := o.s
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return true
	}
	for {
		if !o.member() {
			return false
		}
		s.ws()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			continue
		}
		return s.expect('}')
	}
}

// member reads one key and its value. It reports false on a syntax error.
func (o *object) member() bool {
	s := o.s
	key := s.key()
	if s.err != nil || !s.colon() {
		return false
	}
	f := o.c.byName[string(key)]
	if f == nil {
		return o.unknown(key)
	}
	if len(*o.errs) > o.errStart {
		dropStale(o.errs, o.errStart, f.name)
	}
	if !f.nilable && s.isNull() || f.scalar && s.isBlank() {
		// No value for a field that cannot say so: keep it verbatim.
		o.keep(key, s.value())
		return s.err == nil
	}
	return o.field(f, key)
}

// unknown keeps the value of a key without a field, and reports a key that
// names a field but for surrounding white space.
func (o *object) unknown(key []byte) bool {
	raw := o.s.value()
	if o.s.err != nil {
		return false
	}
	o.keep(key, raw)
	if trimmed := bytes.TrimSpace(key); len(trimmed) < len(key) && o.c.byName[string(trimmed)] != nil {
		*o.errs = append(*o.errs, &FieldError{Path: strconv.Quote(string(key)), Value: short(raw), Err: ErrStrayKey})
	}
	return true
}

// field decodes the value of key into field f. A value that does not fit
// is kept, and reported unless f is quiet.
func (o *object) field(f *field, key []byte) bool {
	s, errs := o.s, o.errs
	start, mark := s.pos, len(*errs)
	fv := o.v.FieldByIndex(f.index)
	var err error
	if f.slot >= 0 {
		err = o.pointer(f, fv)
	} else {
		err = f.dec(s, fv, errs)
	}
	if s.err != nil {
		return false
	}
	if err != nil {
		fv.SetZero()
		*errs = (*errs)[:mark]
		s.pos = start
		raw := s.value()
		if fe := fieldError(err, raw); !f.quiet {
			fe.Path = join(f.name, fe.Path)
			*errs = append(*errs, fe)
		}
		o.keep(key, raw)
		return s.err == nil
	}
	if f.quiet {
		*errs = (*errs)[:mark]
	}
	for _, fe := range (*errs)[mark:] {
		fe.Path = join(f.name, fe.Path)
	}
	if o.extra != nil {
		delete(o.extra, string(key)) // a duplicate key: the last value wins
	}
	return true
}

// pointer decodes the value of pointer field f, fv, as pointerDecoder
// does, into its slot of the object's pointees.
func (o *object) pointer(f *field, fv reflect.Value) error {
	s := o.s
	if s.isNull() || f.blankIsNil && s.isBlank() {
		s.value()
		fv.SetZero()
		return nil
	}
	if !o.pointees.IsValid() {
		o.pointees = reflect.New(o.c.pointees).Elem()
	}
	p := o.pointees.Field(f.slot)
	p.SetZero() // a duplicate key's earlier value
	if err := f.elem(s, p, o.errs); err != nil {
		return err
	}
	fv.Set(p.Addr())
	return nil
}

// keep stores a copy of raw under key, when the struct has an Extra: the
// caller may reuse its buffer.
func (o *object) keep(key, raw []byte) {
	if o.c.extra < 0 {
		return
	}
	if o.extra == nil {
		o.extra = make(map[string]json.RawMessage, 2)
	}
	o.extra[string(key)] = canonical(raw)
}

// canonical returns a copy of raw, valid JSON, in the form json.Marshal
// gives the output of a MarshalJSON method: compact, with <, >, & and the
// line separators U+2028 and U+2029 escaped in strings. A kept value then
// reads back the same after the record is encoded, so that the round trip
// gives an equal record. It allocates once, as a plain copy does.
func canonical(raw []byte) json.RawMessage {
	if !bytes.ContainsAny(raw, " \t\n\r<>&") && !bytes.Contains(raw, lineSep) {
		return bytes.Clone(raw)
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(raw))
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			out = append(out, c, raw[i+1]) // valid JSON: an escape has a next byte
			i++
		case c == '"':
			inString = !inString
			out = append(out, c)
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
		case inString && (c == '<' || c == '>' || c == '&'):
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		case inString && bytes.HasPrefix(raw[i:], lineSep) && len(raw) > i+2 && raw[i+2]&^1 == 0xA8:
			out = append(out, '\\', 'u', '2', '0', '2', hex[raw[i+2]&0xF])
			i += 2
		default:
			out = append(out, c)
		}
	}
	return out
}

// fieldError is err as a *FieldError, with the value raw when err is not
// one already (a nested list's error carries its element's).
func fieldError(err error, raw []byte) *FieldError {
	fe, ok := err.(*FieldError)
	if !ok {
		fe = &FieldError{Value: short(raw), Err: err}
	}
	return fe
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

// lineSep starts U+2028 and U+2029 in UTF-8.
var lineSep = []byte("\xe2\x80")
