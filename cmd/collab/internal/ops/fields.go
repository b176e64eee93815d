package ops

import (
	"reflect"
	"strings"
	"sync"

	"github.com/collabsvc/collab"
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

// SecretFields are the JSON names of the fields of the record type t that
// hold a collab.Secret: a credential the server handed out (a user's
// private token, a project's runners token). A front end shows them as
// collab.Redacted, never as their value.
func SecretFields(t reflect.Type) []string {
	if names, ok := secretFields.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if f.IsExported() && !f.Anonymous && f.Type == reflect.TypeFor[collab.Secret]() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	secretFields.Store(t, names)
	return names
}

// secretFields caches SecretFields by type: a front end asks for every
// record it prints.
var secretFields sync.Map
