package jsonkeep

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// A decodeFunc reads the next value into v, which is settable. It returns
// an error when the value does not fit, leaving the scanner anywhere inside
// the value; the caller rewinds. Errors inside nested records, which keep
// the bad value themselves, go to errs instead.
type decodeFunc func(s *scanner, v reflect.Value, errs *Errors) error

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasDecoder reports whether *t decodes itself, as encoding/json sees it:
// from JSON, or from a string's text.
func hasDecoder(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType)
}

func numberKind(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Float64 }

// decoderOf returns the decodeFunc of type t.
func decoderOf(t reflect.Type) decodeFunc {
	switch {
	case isRecord(t):
		return recordDecoder(t)
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return viaUnmarshaler
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType):
		// A type that reads its text (an address, an enum) is read as
		// encoding/json reads it.
		return viaEncodingJSON
	}
	switch k := t.Kind(); {
	case k == reflect.Pointer:
		return pointerDecoder(t)
	case k == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		return sliceDecoder(t)
	case k == reflect.String:
		return decodeString
	case k == reflect.Bool:
		return scalar(setBool)
	case k >= reflect.Int && k <= reflect.Int64:
		return scalar(func(raw []byte, v reflect.Value) error { return setInt(raw, v, t.Bits()) })
	case k >= reflect.Uint && k <= reflect.Uint64:
		return scalar(func(raw []byte, v reflect.Value) error { return setUint(raw, v, t.Bits()) })
	case k == reflect.Float32 || k == reflect.Float64:
		return scalar(func(raw []byte, v reflect.Value) error { return setFloat(raw, v, t.Bits()) })
	}
	// Anything else (maps, interfaces, arrays, byte slices, embedded
	// structs) is what encoding/json reads; it is rare in payloads.
	return viaEncodingJSON
}

// recordDecoder reads an object, or null for no change, into struct type t
// in the same pass.
func recordDecoder(t reflect.Type) decodeFunc {
	return func(s *scanner, v reflect.Value, errs *Errors) error {
		if s.isNull() {
			s.pos += 4
			return nil
		}
		if s.pos < len(s.data) && s.data[s.pos] != '{' {
			return errors.New("expected a JSON object")
		}
		codecOf(t).decode(s, v, errs)
		return nil
	}
}

// viaUnmarshaler reads the next value with the type's own UnmarshalJSON.
func viaUnmarshaler(s *scanner, v reflect.Value, _ *Errors) error {
	raw := s.value()
	if s.err != nil {
		return nil
	}
	return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw)
}

// decodeString reads a string; null leaves the zero value.
func decodeString(s *scanner, v reflect.Value, _ *Errors) error {
	raw := s.value()
	switch {
	case s.err != nil || raw[0] == 'n':
		return nil
	case raw[0] != '"':
		return errors.New("expected a string")
	}
	v.SetString(s.text(raw))
	return nil
}

func setBool(raw []byte, v reflect.Value) error {
	b, err := parseBool(raw)
	v.SetBool(b)
	return err
}

func setInt(raw []byte, v reflect.Value, bits int) error {
	n, err := parseInt(raw, bits)
	v.SetInt(n)
	return err
}

func setUint(raw []byte, v reflect.Value, bits int) error {
	n, err := parseUint(raw, bits)
	v.SetUint(n)
	return err
}

func setFloat(raw []byte, v reflect.Value, bits int) error {
	f, err := parseFloat(raw, bits)
	if err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		err = errors.New("number out of range")
	}
	v.SetFloat(f)
	return err
}

// viaEncodingJSON reads the next value with json.Unmarshal.
func viaEncodingJSON(s *scanner, v reflect.Value, _ *Errors) error {
	raw := s.value()
	if s.err != nil {
		return nil
	}
	return json.Unmarshal(raw, v.Addr().Interface())
}

// scalar wraps the parser of a number or a bool: null leaves the zero
// value, and an object or an array does not fit.
func scalar(parse func(raw []byte, v reflect.Value) error) decodeFunc {
	return func(s *scanner, v reflect.Value, _ *Errors) error {
		raw := s.value()
		switch {
		case s.err != nil || raw[0] == 'n':
			return nil
		case raw[0] == '{' || raw[0] == '[':
			return fmt.Errorf("expected a scalar")
		}
		return parse(raw, v)
	}
}

// pointerDecoder reads null, or for a number or a bool a blank string, as
// nil, and anything else into a new value.
func pointerDecoder(t reflect.Type) decodeFunc {
	elem := decoderOf(t.Elem())
	k := t.Elem().Kind()
	blankIsNil := k == reflect.Bool || numberKind(k)
	return func(s *scanner, v reflect.Value, errs *Errors) error {
		if s.isNull() || blankIsNil && s.isBlank() {
			s.value()
			v.SetZero()
			return nil
		}
		p := reflect.New(t.Elem())
		if err := elem(s, p.Elem(), errs); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
}

// sliceDecoder reads an array element by element, growing the slice in
// place. An element that does not fit makes the whole list not fit, with the
// element's path.
func sliceDecoder(t reflect.Type) decodeFunc {
	elem := decoderOf(t.Elem())
	return func(s *scanner, v reflect.Value, errs *Errors) error {
		if s.isNull() {
			s.pos += 4
			v.SetZero()
			return nil
		}
		if s.pos >= len(s.data) || s.data[s.pos] != '[' {
			return errors.New("expected an array")
		}
		if s.depth++; s.depth > maxDepth {
			return s.syntax("nested too deeply")
		}
		defer func() { s.depth-- }()
		s.pos++
		s.ws()
		if s.pos < len(s.data) && s.data[s.pos] == ']' {
			s.pos++
			v.Set(reflect.MakeSlice(t, 0, 0)) // [] is empty, not nil
			return nil
		}
		return elements(s, v, elem, errs)
	}
}

// elements reads the elements of a non-empty array, after its opening
// bracket, into slice v, and the closing bracket.
func elements(s *scanner, v reflect.Value, elem decodeFunc, errs *Errors) error {
	v.SetLen(0)
	for n := 0; ; n++ {
		if n == v.Cap() {
			v.Grow(max(4, n))
		}
		v.SetLen(n + 1)
		el := v.Index(n)
		el.SetZero()
		start, mark := s.pos, len(*errs)
		err := elem(s, el, errs)
		if s.err != nil {
			return nil
		}
		if err != nil {
			s.pos = start
			fe := fieldError(err, s.value())
			fe.Path = index(n) + dotted(fe.Path)
			return fe
		}
		for _, fe := range (*errs)[mark:] {
			fe.Path = index(n) + dotted(fe.Path)
		}
		s.ws()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			s.ws()
			continue
		}
		s.expect(']')
		return nil
	}
}

func index(n int) string { return "[" + strconv.Itoa(n) + "]" }
