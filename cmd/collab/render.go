package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"text/template"

	"github.com/itchyny/gojq"
	"github.com/spf13/pflag"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// allFields is the value of a bare --json: every field.
const allFields = "*"

// outputFlags are the flags of every command that prints records: one
// output contract for all of them.
type outputFlags struct {
	json     string // "" off, allFields, or a comma-separated list
	jq       string
	template string

	fields []string // parsed from json
	filter *gojq.Code
	tmpl   *template.Template
}

func (o *outputFlags) bind(f *pflag.FlagSet, op *ops.Op) {
	f.StringVar(&o.json, "json", "", "print JSON: every field, or only the comma-separated `FIELDS` ("+
		strings.Join(ops.FieldNames(op.Record), ", ")+")")
	f.Lookup("json").NoOptDefVal = allFields
	f.StringVarP(&o.jq, "jq", "q", "", "filter the JSON with a jq `EXPRESSION`, over the whole result (strings print bare)")
	f.StringVarP(&o.template, "template", "t", "", "format the JSON with a Go `TEMPLATE` (text/template), over the whole result")
}

// check parses the flags against the operation's record.
func (o *outputFlags) check(op *ops.Op) error {
	if op.Record == nil {
		return nil
	}
	if o.jq != "" && o.template != "" {
		return usagef("give one of --jq and --template")
	}
	if o.json != "" && o.json != allFields {
		known := ops.FieldNames(op.Record)
		for _, f := range strings.Split(o.json, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(known, f) {
				return usagef("--json: %s records have no field %q; they have: %s", op.Noun, f, strings.Join(known, ", "))
			}
			o.fields = append(o.fields, f)
		}
	}
	var err error
	if o.filter, err = compileJQ(o.jq); err != nil {
		return err
	}
	if o.template != "" {
		if o.tmpl, err = template.New("output").Funcs(templateFuncs).Parse(o.template); err != nil {
			return usagef("--template: %v", err)
		}
	}
	return nil
}

// templateFuncs are what --template offers beyond text/template's own.
var templateFuncs = template.FuncMap{
	"join": func(sep string, v any) string { return joinCell(v, sep) },
	"json": func(v any) (string, error) {
		b, err := gojq.Marshal(v)
		return string(b), err
	},
}

// structured says that the output is JSON or made from it: --json, --jq or
// --template.
func (o *outputFlags) structured() bool { return o.json != "" || o.filter != nil || o.tmpl != nil }

// listFlags are the flags of a list.
type listFlags struct {
	limitN   int
	limitSet *pflag.Flag
	paginate bool
}

// defaultLimit is how many items a list prints without --limit or
// --paginate, as gh prints.
const defaultLimit = 30

func (l *listFlags) bind(f *pflag.FlagSet) {
	f.IntVarP(&l.limitN, "limit", "L", defaultLimit, "print at most `N` items")
	f.BoolVar(&l.paginate, "paginate", false, "print every item of every page, as one document")
	l.limitSet = f.Lookup("limit")
}

// limit is the most items to print; 0 is no limit.
func (l *listFlags) limit() int {
	if l.paginate && !l.limitSet.Changed {
		return 0
	}
	return max(l.limitN, 0)
}

// newOutWriter buffers standard output.
func newOutWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, 64<<10) }

// printList prints up to limit items (0: all) of a list.
func (o *outputFlags) printList(std stdio, op *ops.Op, items iter.Seq2[any, error], limit int) error {
	w := newOutWriter(std.out)
	err := o.list(w, std, op, items, limit)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (o *outputFlags) list(w *bufio.Writer, std stdio, op *ops.Op, items iter.Seq2[any, error], limit int) error {
	if o.json == allFields && o.filter == nil && o.tmpl == nil {
		return streamJSON(w, items, limit)
	}
	var all []any
	n := 0
	for it, err := range items {
		if err != nil {
			return err
		}
		v, err := o.generic(it)
		if err != nil {
			return err
		}
		all = append(all, v)
		if n++; n == limit {
			break
		}
	}
	if all == nil {
		all = []any{}
	}
	if o.structured() {
		return o.emit(w, all)
	}
	if len(all) == 0 && isTerminal(std.err) {
		fmt.Fprintf(std.err, "collab: %s: nothing to show\n", op.Name())
	}
	return writeTable(w, op.Fields, all, isTTY(std.out))
}

// streamJSON writes every item as one JSON array as the pages arrive,
// holding one page at a time.
func streamJSON(w *bufio.Writer, items iter.Seq2[any, error], limit int) error {
	w.WriteByte('[')
	n := 0
	for it, err := range items {
		if err != nil {
			return err
		}
		b, err := encodeRecord(it)
		if err != nil {
			return err
		}
		if n > 0 {
			w.WriteByte(',')
		}
		w.Write(b)
		if n++; n == limit {
			break
		}
	}
	_, err := w.WriteString("]\n")
	return err
}

// printRecord prints one record.
func (o *outputFlags) printRecord(std stdio, op *ops.Op, rec any) error {
	v, err := o.generic(rec)
	if err != nil {
		return err
	}
	w := newOutWriter(std.out)
	if o.structured() {
		err = o.emit(w, v)
	} else {
		err = writeView(w, op.Fields, v.(map[string]any), isTTY(std.out))
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// generic turns a record into what jq and templates read: maps, slices,
// json.Number and the rest, with only the --json fields when given.
func (o *outputFlags) generic(rec any) (any, error) {
	b, err := encodeRecord(rec)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if m, ok := v.(map[string]any); ok && o.fields != nil {
		kept := make(map[string]any, len(o.fields))
		for _, f := range o.fields {
			kept[f] = m[f]
		}
		return kept, nil
	}
	return v, nil
}

// encodeRecord encodes a record as its own MarshalJSON writes it: every
// field and every key kept from the server, with "<" and "&" as they are
// (json.Marshal would escape them for HTML, and check the bytes again).
func encodeRecord(rec any) ([]byte, error) {
	var b []byte
	var err error
	if m, ok := rec.(json.Marshaler); ok {
		b, err = m.MarshalJSON()
	} else {
		b, err = json.Marshal(rec)
	}
	if err != nil {
		return nil, err
	}
	return redactSecrets(b, reflect.TypeOf(rec))
}

// redactSecrets replaces the values of the record's secret fields (see
// ops.SecretFields) with collab.Redacted: a token the server handed out
// never reaches standard output.
func redactSecrets(b []byte, t reflect.Type) ([]byte, error) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return b, nil
	}
	secrets := ops.SecretFields(t)
	if len(secrets) == 0 {
		return b, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, k := range secrets {
		if v, ok := m[k]; ok && string(v) != "null" && string(v) != `""` {
			m[k] = json.RawMessage(strconv.Quote(collab.Redacted))
		}
	}
	return json.Marshal(m)
}

// emit prints v as --json, --jq or --template ask.
func (o *outputFlags) emit(w *bufio.Writer, v any) error {
	if o.tmpl != nil {
		if err := o.tmpl.Execute(w, v); err != nil {
			return fmt.Errorf("--template: %w", err)
		}
		return nil
	}
	out := &output{w: w, filter: o.filter}
	return out.emit(v)
}

// writeTable writes one row per item: on a terminal aligned under a
// header, else tab-separated without one, for cut and awk.
func writeTable(w io.Writer, fields []string, items []any, tty bool) error {
	if !tty {
		for _, it := range items {
			m, _ := it.(map[string]any)
			for i, f := range fields {
				if i > 0 {
					io.WriteString(w, "\t")
				}
				io.WriteString(w, cell(lookup(m, f)))
			}
			io.WriteString(w, "\n")
		}
		return nil
	}
	if len(items) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for i, f := range fields {
		if i > 0 {
			io.WriteString(tw, "\t")
		}
		head, _, _ := strings.Cut(f, ".")
		io.WriteString(tw, strings.ToUpper(head))
	}
	io.WriteString(tw, "\n")
	for _, it := range items {
		m, _ := it.(map[string]any)
		for i, f := range fields {
			if i > 0 {
				io.WriteString(tw, "\t")
			}
			io.WriteString(tw, truncate(cell(lookup(m, f)), 60))
		}
		io.WriteString(tw, "\n")
	}
	return tw.Flush()
}

// writeView writes one record as lines of field and value: aligned on a
// terminal, tab-separated off one.
func writeView(w io.Writer, fields []string, m map[string]any, tty bool) error {
	out := w
	var tw *tabwriter.Writer
	if tty {
		tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		out = tw
	}
	for _, f := range fields {
		sep := "\t"
		if tty {
			sep = ":\t"
		}
		fmt.Fprintf(out, "%s%s%s\n", f, sep, cell(lookup(m, f)))
	}
	if tw != nil {
		return tw.Flush()
	}
	return nil
}

// lookup reads the field at a dotted path.
func lookup(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

// cell is how a value reads in a table: lists joined by commas, objects as
// JSON, and tabs and line breaks as spaces so that a row stays one line.
func cell(v any) string {
	var s string
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		s = v
	case []any:
		s = joinCell(v, ",")
	case map[string]any:
		b, _ := gojq.Marshal(v)
		s = string(b)
	default:
		s = fmt.Sprint(v)
	}
	s = onceMarker.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// onceMarker is the comment the SDK's CreateOnce helpers add to what they
// create; a table leaves it out, the JSON keeps it.
var onceMarker = regexp.MustCompile(`\s*<!-- collab-once [0-9a-f]+ -->`)

// joinCell joins a list's cells with sep.
func joinCell(v any, sep string) string {
	list, ok := v.([]any)
	if !ok {
		return cell(v)
	}
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = cell(e)
	}
	return strings.Join(parts, sep)
}

// truncate shortens s to n runes on a terminal, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// forceTTYEnv makes the command print as on a terminal when set to 1 (and
// as off one when 0), for tests and for scripts that want the table.
const forceTTYEnv = "COLLAB_FORCE_TTY"

// isTTY reports whether w gets terminal output: a terminal, or the
// environment forces it.
func isTTY(w io.Writer) bool {
	switch os.Getenv(forceTTYEnv) {
	case "1", "true":
		return true
	case "0", "false":
		return false
	}
	return isTerminal(w)
}
