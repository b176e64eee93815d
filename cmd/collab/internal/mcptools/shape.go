package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/collabsvc/collab"
)

// jsonFields maps each JSON key of struct type t, embedded structs'
// included, to the struct type under it (pointers and slices looked
// through), or to nil for a value that is not a record.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported():
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			for k, v := range jsonFields(f.Type) {
				m[k] = v
			}
		case name == "":
			m[f.Name] = recordType(f.Type)
		default:
			m[name] = recordType(f.Type)
		}
	}
	fieldCache.Store(t, m)
	return m
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// hideSecrets replaces the values of obj, a record of type t, that are
// credentials (a project's runners token, a user's private token) with
// collab.Redacted: no answer hands an agent a credential.
func hideSecrets(obj map[string]json.RawMessage, t reflect.Type) {
	if t == nil {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			hideSecrets(obj, f.Type)
		case f.Type == reflect.TypeFor[collab.Secret]():
			if v, ok := obj[name]; ok && string(v) != `""` && string(v) != "null" {
				obj[name], _ = json.Marshal(collab.Redacted)
			}
		}
	}
}

// recordType is the struct type t holds, through pointers and slices, or
// nil when it holds none (a collab.Time is a value, not a record).
func recordType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeFor[collab.Time]() {
		return nil
	}
	return t
}

// paths is the dotted paths a record shows: fields when the call named
// them, else the trimmed ones; nil shows every key.
func (s *Spec) paths(fields []string) []string {
	if len(fields) > 0 {
		return fields
	}
	return s.Fields
}

// pick copies the value at path in obj into out, building the objects on
// the way. A path into a null or a value that is not an object copies
// that value.
func pick(out map[string]any, obj map[string]json.RawMessage, path []string) {
	v, ok := obj[path[0]]
	if !ok {
		return
	}
	var sub map[string]json.RawMessage
	if len(path) == 1 || json.Unmarshal(v, &sub) != nil || sub == nil {
		out[path[0]] = v
		return
	}
	next, _ := out[path[0]].(map[string]any)
	if next == nil {
		next = map[string]any{}
		out[path[0]] = next
	}
	pick(next, sub, path[1:])
}

// checkFields fails on a path in fields whose first name is not a key of
// the records of type t, naming the argument and the keys it takes.
func checkFields(t reflect.Type, fields []string) error {
	known := jsonFields(t)
	for _, f := range fields {
		head, _, _ := strings.Cut(f, ".")
		if _, ok := known[head]; !ok {
			names := make([]string, 0, len(known))
			for k := range known {
				names = append(names, k)
			}
			sort.Strings(names)
			return argError("fields", fmt.Sprintf("unknown field %q; the fields are %s", f, strings.Join(names, ", ")))
		}
	}
	return nil
}

// Page is what a list tool answers.
type Page struct {
	Items   []json.RawMessage `json:"items"`
	Page    int               `json:"page"`
	PerPage int               `json:"per_page"`
	// Total is how many items the whole list has, when the server says.
	Total int `json:"total,omitempty"`
	// Truncated says that the list goes on past this page.
	Truncated bool `json:"truncated"`
}

// cutWriter keeps what a text writer writes in at most 2*max bytes: the
// first max bytes and the last max bytes.
type cutWriter struct {
	max  int
	head []byte
	tail []byte // a ring once full: tail[at:] then tail[:at]
	at   int
	n    int64
	nul  bool // a NUL byte was written: the content is binary
}

func (w *cutWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.n += int64(n)
	w.nul = w.nul || bytes.IndexByte(p, 0) >= 0
	if room := w.max - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if len(w.tail) < w.max {
			k := min(w.max-len(w.tail), len(p))
			w.tail = append(w.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(w.tail[w.at:], p)
		w.at = (w.at + k) % w.max
		p = p[k:]
	}
	return n, nil
}

// text is what was written, cut to about max bytes: it keeps the first
// quarter and the last three (a diff starts with what it is about; a
// trace ends with why it failed) and puts a line in the middle saying how
// much is left out. Cuts fall on line ends where one is near, and never
// inside a UTF-8 sequence. Binary content is not shown.
func (w *cutWriter) text() string {
	tail := string(w.tail[w.at:]) + string(w.tail[:w.at])
	if int(w.n) <= w.max {
		return w.textOrBinary(string(w.head) + tail)
	}
	head := string(w.head)
	h := w.max / 4
	if i := strings.LastIndexByte(head[:h], '\n'); i >= h/2 {
		h = i + 1
	}
	for h > 0 && !utf8.RuneStart(head[h]) {
		h--
	}
	t := head[h:] + tail // the text after the head, or its end when longer than max
	from := len(t) - (w.max - w.max/4)
	if i := strings.IndexByte(t[from:], '\n'); i >= 0 && i < (len(t)-from)/2 {
		from += i + 1
	}
	for from < len(t) && !utf8.RuneStart(t[from]) {
		from++
	}
	left := w.n - int64(h) - int64(len(t)-from)
	sep := ""
	if h > 0 && head[h-1] != '\n' {
		sep = "\n"
	}
	return w.textOrBinary(fmt.Sprintf("%s%s[cut: %d of %d bytes left out here; raise max_bytes to see more]\n%s", head[:h], sep, left, w.n, t[from:]))
}

func (w *cutWriter) textOrBinary(s string) string {
	if w.nul || !utf8.ValidString(s) {
		return fmt.Sprintf("[binary content of %d bytes, not shown]", w.n)
	}
	return s
}
