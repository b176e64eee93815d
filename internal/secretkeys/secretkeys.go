// Package secretkeys finds, by reflection, the credentials that the SDK's
// records carry: every field of type collab.Secret in a type that a method
// of collab.Client or runner.Client takes or returns, at any depth. What
// hides credentials (the recorder, the tests of encodings) reads them here,
// so that a record that gains one is covered with no other edit.
package secretkeys

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/runner"
)

// A Field is a Secret field of a record.
type Field struct {
	Record reflect.Type // the struct that declares it
	Name   string       // the Go field's name
	Key    string       // its JSON key
}

// module prefixes the import paths of the types walked into.
const module = "github.com/collabsvc/collab"

var secretType = reflect.TypeFor[collab.Secret]()

// found is the walk, done once: every type reached from the two clients.
var found = sync.OnceValue(func() []reflect.Type {
	w := walker{seen: map[reflect.Type]bool{}}
	w.walk(reflect.TypeFor[*collab.Client]())
	w.walk(reflect.TypeFor[*runner.Client]())
	return w.order
})

// Fields returns every Secret field of the records reached, in the order
// the walk met them.
func Fields() []Field {
	var out []Field
	for _, t := range found() {
		if t.Kind() != reflect.Struct {
			continue
		}
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Type == secretType && sf.IsExported() {
				if key := jsonKey(sf); key != "" {
					out = append(out, Field{Record: t, Name: sf.Name, Key: key})
				}
			}
		}
	}
	return out
}

// Keys returns the JSON keys of Fields, sorted, each once.
func Keys() []string {
	var keys []string
	for _, f := range Fields() {
		keys = append(keys, f.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Records returns the struct types reached that hold a Secret, in a field
// of their own or inside one (a record that embeds or points to another).
func Records() []reflect.Type {
	var out []reflect.Type
	for _, t := range found() {
		if t.Kind() == reflect.Struct && holds(t, map[reflect.Type]bool{}) {
			out = append(out, t)
		}
	}
	return out
}

// holds reports whether a value of t can hold a Secret.
func holds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == secretType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holds(t.Elem(), seen)
	case reflect.Map:
		return holds(t.Key(), seen) || holds(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() && sf.Tag.Get("json") != "-" && holds(sf.Type, seen) {
				return true
			}
		}
	}
	return false
}

// jsonKey is the key encoding/json writes sf under, "" for none; an
// embedded struct without a tag has none of its own.
func jsonKey(sf reflect.StructField) string {
	tag := sf.Tag.Get("json")
	if tag == "-" || sf.Anonymous && tag == "" {
		return ""
	}
	if name, _, _ := strings.Cut(tag, ","); name != "" {
		return name
	}
	return sf.Name
}

// walker visits every type reachable from a client: its exported fields
// (the services), the parameters and results of the exported methods, and
// the fields, elements and functions of what those hold. Of types from
// outside the module only the unnamed ones and functions (iter.Seq2) are
// opened.
type walker struct {
	seen  map[reflect.Type]bool
	order []reflect.Type
}

func (w *walker) walk(t reflect.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	ours := strings.HasPrefix(t.PkgPath(), module) || t.PkgPath() == "" && t.Kind() == reflect.Pointer && strings.HasPrefix(t.Elem().PkgPath(), module)
	if t.PkgPath() != "" && !ours && t.Kind() != reflect.Func {
		return
	}
	w.order = append(w.order, t)
	if ours {
		for i := range t.NumMethod() {
			w.walk(t.Method(i).Type)
		}
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Chan:
		w.walk(t.Elem())
	case reflect.Map:
		w.walk(t.Key())
		w.walk(t.Elem())
	case reflect.Func:
		for i := range t.NumIn() {
			w.walk(t.In(i))
		}
		for i := range t.NumOut() {
			w.walk(t.Out(i))
		}
	case reflect.Struct:
		for i := range t.NumField() {
			if sf := t.Field(i); sf.IsExported() {
				w.walk(sf.Type)
			}
		}
	}
}
