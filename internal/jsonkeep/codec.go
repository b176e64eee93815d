package jsonkeep

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// A codec is how one struct type decodes and encodes.
type codec struct {
	once   sync.Once
	typ    reflect.Type
	fields []field
	byName map[string]*field
	keep   int // index of the embedded Keep, or -1
	extra  int // index of a plain Extra field, or -1 (also -1 with a Keep)
}

type field struct {
	name      string
	alias     string // another key that also reads the field
	quiet     bool   // a value that does not fit is kept without an error
	index     []int  // in the struct, through embedded structs
	bit       int    // in keySet
	omitEmpty bool
	nilable   bool // null is a value of the field (pointer, slice, map)
	scalar    bool // a number or a bool, for which a blank string is no value
	dec       decodeFunc
}

var (
	keepType  = reflect.TypeFor[Keep]()
	extraType = reflect.TypeFor[map[string]json.RawMessage]()
	codecs    sync.Map // reflect.Type -> *codec
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
	c.keep, c.extra = -1, -1
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
// same name inside. Only the top level's Keep or Extra is the codec's; a
// Keep further down belongs to the embedded record and is skipped.
func (c *codec) addFields(t reflect.Type, path []int) {
	var embedded []reflect.StructField
	for i := range t.NumField() {
		sf := t.Field(i)
		switch {
		case sf.Type == keepType:
			if path == nil && isKeep(sf) {
				c.keep, c.extra = i, -1
			}
			continue
		case path == nil && c.keep < 0 && sf.Name == "Extra" && sf.Type == extraType:
			c.extra = i
			continue
		case sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "":
			embedded = append(embedded, sf)
			continue
		}
		if f, ok := c.newField(sf, path); ok {
			c.fields = append(c.fields, f)
		}
	}
	for _, sf := range embedded {
		c.addFields(sf.Type, append(slices.Clip(path), sf.Index[0]))
	}
}

// newField describes struct field sf, found at index path; false for a
// field that JSON does not see, or that an outer field of its name hides.
func (c *codec) newField(sf reflect.StructField, path []int) (field, bool) {
	tag := sf.Tag.Get("json")
	if !sf.IsExported() || tag == "-" || tag == "" {
		return field{}, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = sf.Name
	}
	if c.has(name) {
		return field{}, false
	}
	k := sf.Type.Kind()
	return field{
		name: name, alias: sf.Tag.Get("alias"), quiet: sf.Tag.Get("jsonkeep") == "quiet",
		index: append(slices.Clip(path), sf.Index[0]), bit: len(c.fields),
		omitEmpty: strings.Contains(opts, "omitempty"),
		nilable:   k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface,
		scalar:    k == reflect.Bool || numberKind(k),
		dec:       decoderOf(sf.Type),
	}, true
}

func (c *codec) has(name string) bool {
	for i := range c.fields {
		if c.fields[i].name == name {
			return true
		}
	}
	return false
}

// kept returns the Extra map and the key set of struct v.
func (c *codec) kept(v reflect.Value) (map[string]json.RawMessage, keySet) {
	switch {
	case c.keep >= 0 && v.CanAddr():
		k := v.Field(c.keep).Addr().Interface().(*Keep)
		return k.Extra, k.keys
	case c.keep >= 0:
		k := v.Field(c.keep).Interface().(Keep)
		return k.Extra, k.keys
	case c.extra >= 0:
		return v.Field(c.extra).Interface().(map[string]json.RawMessage), keySet{}
	}
	return nil, keySet{}
}

// store sets the Extra map and the key set of struct v, which is settable.
func (c *codec) store(v reflect.Value, extra map[string]json.RawMessage, keys keySet) {
	switch {
	case c.keep >= 0:
		k := v.Field(c.keep).Addr().Interface().(*Keep)
		k.Extra, k.keys = extra, keys
	case c.extra >= 0 && extra != nil:
		v.Field(c.extra).Set(reflect.ValueOf(extra))
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

// isRecord reports whether struct type t decodes in the same pass as the
// object holding it: it keeps its own keys (an embedded Keep), or it is a
// plain struct without a decoder of its own whose exported fields all carry
// a JSON name, so that reading it here finds what encoding/json would.
func isRecord(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	plain := !hasDecoder(t)
	for i := range t.NumField() {
		f := t.Field(i)
		if isKeep(f) {
			return true
		}
		if f.Anonymous || f.IsExported() && f.Tag.Get("json") == "" {
			plain = false
		}
	}
	return plain && t.NumField() > 0
}
