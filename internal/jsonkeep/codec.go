package jsonkeep

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A codec is how one struct type decodes and encodes.
type codec struct {
	once   sync.Once
	typ    reflect.Type
	fields []field
	byName map[string]*field
	extra  int // index of the Extra field, or -1

	// pointees is a struct with a field for the value of each pointer
	// field (see field.slot), nil when there are none.
	pointees reflect.Type
}

type field struct {
	name    string
	alias   string // another key that also reads the field
	quiet   bool   // a value that does not fit is kept without an error
	index   []int  // in the struct, through embedded structs
	nilable bool   // null is a value of the field (pointer, slice, map), or its zero value encodes as null
	scalar  bool   // a number or a bool, for which a blank string is no value
	dec     decodeFunc

	// A pointer field's value is decoded into field slot of the object's
	// pointees, with elem; slot is -1 for other fields.
	slot       int
	elem       decodeFunc
	blankIsNil bool
}

var (
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
	c.extra = -1
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
	c.addPointees()
}

// addPointees gives each pointer field a slot in one struct, pointees, so
// that the values an object's pointer fields point to are allocated
// together, once per object, instead of one by one: a record's dates,
// optional strings and nested records. They are the record's own values,
// so sharing one allocation keeps nothing alive that the record does not.
func (c *codec) addPointees() {
	var slots []reflect.StructField
	for i := range c.fields {
		f := &c.fields[i]
		f.slot = -1
		t := c.typ.FieldByIndex(f.index).Type
		if t.Kind() != reflect.Pointer {
			continue
		}
		f.slot, f.elem = len(slots), decoderOf(t.Elem())
		k := t.Elem().Kind()
		f.blankIsNil = k == reflect.Bool || numberKind(k)
		slots = append(slots, reflect.StructField{Name: "F" + strconv.Itoa(f.slot), Type: t.Elem()})
	}
	if len(slots) > 0 {
		c.pointees = reflect.StructOf(slots)
	}
}

// addFields adds the fields of struct type t, found at index path in the
// codec's type. The fields of an embedded struct are promoted, as
// encoding/json promotes them: a field of the outer type hides one of the
// same name inside. Only the top level's Extra is the codec's; an Extra
// further down belongs to the embedded record and is skipped (it is
// tagged json:"-").
func (c *codec) addFields(t reflect.Type, path []int) {
	var embedded []reflect.StructField
	for i := range t.NumField() {
		sf := t.Field(i)
		switch {
		case path == nil && sf.Name == "Extra" && sf.Type == extraType:
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
	name, _, _ := strings.Cut(tag, ",") // omitempty is ignored: every field is written
	if name == "" {
		name = sf.Name
	}
	if c.has(name) {
		return field{}, false
	}
	k := sf.Type.Kind()
	return field{
		name: name, alias: sf.Tag.Get("alias"), quiet: sf.Tag.Get("jsonkeep") == "quiet",
		index:   append(slices.Clip(path), sf.Index[0]),
		nilable: k == reflect.Pointer || k == reflect.Slice || k == reflect.Map || k == reflect.Interface || zeroIsNull(sf.Type),
		scalar:  k == reflect.Bool || numberKind(k),
		dec:     decoderOf(sf.Type),
	}, true
}

// zeroIsNull reports whether the zero value of t encodes as null (a zero
// Time, say): null then decodes to it, so that a zero value written and read
// back stays as it was, with nothing kept in Extra.
func zeroIsNull(t reflect.Type) bool {
	b, err := json.Marshal(reflect.Zero(t).Interface())
	return err == nil && string(b) == "null"
}

func (c *codec) has(name string) bool {
	for i := range c.fields {
		if c.fields[i].name == name {
			return true
		}
	}
	return false
}

// extraOf returns the Extra map of struct v.
func (c *codec) extraOf(v reflect.Value) map[string]json.RawMessage {
	if c.extra < 0 {
		return nil
	}
	return v.Field(c.extra).Interface().(map[string]json.RawMessage)
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
// object holding it: it keeps its own keys (an Extra field), or it is a
// plain struct without a decoder of its own whose exported fields all carry
// a JSON name, so that reading it here finds what encoding/json would.
func isRecord(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if isKept(t) {
		return true
	}
	plain := !hasDecoder(t)
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous || f.IsExported() && f.Tag.Get("json") == "" {
			plain = false
		}
	}
	return plain && t.NumField() > 0
}
