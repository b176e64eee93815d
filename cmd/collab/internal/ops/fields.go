package ops

import (
	"reflect"
	"strings"
)

// FieldNames are the JSON names of the fields of the record type t (a
// struct), in order, with the fields of embedded structs in place. Keys a
// server sends beyond them are kept by the records too, and encoded after
// these.
func FieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		names = append(names, name)
	}
	return names
}
