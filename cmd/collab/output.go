package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/itchyny/gojq"
	"golang.org/x/term"
)

// maxDocument bounds a single response read whole for --jq or --ndjson.
const maxDocument = 1 << 30

// output prints what collab api receives: the document as it came, one
// array built from pages, or one line per item, each through --jq if given.
type output struct {
	w      *bufio.Writer
	filter *gojq.Code
	ndjson bool

	all   []any // the items, when --jq needs the whole array
	count int
	line  bytes.Buffer
}

func compileJQ(expr string) (*gojq.Code, error) {
	if expr == "" {
		return nil, nil
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, usagef("--jq: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, usagef("--jq: %v", err)
	}
	return code, nil
}

// document prints a whole response body.
func (o *output) document(r io.Reader) error {
	if o.filter == nil && !o.ndjson {
		_, err := io.Copy(o.w, r)
		return err
	}
	b, err := io.ReadAll(io.LimitReader(r, maxDocument+1))
	if err != nil {
		return err
	}
	if len(b) > maxDocument {
		return fmt.Errorf("the response is larger than %d bytes", maxDocument)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil // 204 and friends: nothing to filter
	}
	if !o.ndjson {
		v, err := decodeJSON(b)
		if err != nil {
			return err
		}
		return o.emit(v)
	}
	var items []json.RawMessage
	if json.Unmarshal(b, &items) != nil {
		return o.item(b) // an object: one line
	}
	for _, it := range items {
		if err := o.item(it); err != nil {
			return err
		}
	}
	return nil
}

// begin, item and end print the items of every page: one array, or with
// --ndjson one line each.
func (o *output) begin() error {
	if o.ndjson || o.filter != nil {
		return nil
	}
	return o.w.WriteByte('[')
}

func (o *output) item(raw json.RawMessage) error {
	o.count++
	switch {
	case o.ndjson && o.filter != nil:
		v, err := decodeJSON(raw)
		if err != nil {
			return err
		}
		return o.emit(v)
	case o.ndjson:
		o.line.Reset()
		if err := json.Compact(&o.line, raw); err != nil {
			return err
		}
		o.line.WriteByte('\n')
		_, err := o.w.Write(o.line.Bytes())
		return err
	case o.filter != nil:
		v, err := decodeJSON(raw)
		if err != nil {
			return err
		}
		o.all = append(o.all, v)
		return nil
	}
	if o.count > 1 {
		if err := o.w.WriteByte(','); err != nil {
			return err
		}
	}
	_, err := o.w.Write(raw)
	return err
}

func (o *output) end() error {
	switch {
	case o.ndjson:
		return nil
	case o.filter != nil:
		all := o.all
		if all == nil {
			all = []any{}
		}
		return o.emit(all)
	}
	_, err := o.w.WriteString("]\n")
	return err
}

// emit prints v, through the filter when there is one: each result on a
// line, strings without quotes.
func (o *output) emit(v any) error {
	if o.filter == nil {
		return o.writeJSON(v)
	}
	iter := o.filter.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := r.(error); isErr {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return fmt.Errorf("--jq: %w", err)
		}
		if s, isString := r.(string); isString {
			if _, err := o.w.WriteString(s + "\n"); err != nil {
				return err
			}
			continue
		}
		if err := o.writeJSON(r); err != nil {
			return err
		}
	}
}

func (o *output) writeJSON(v any) error {
	b, err := gojq.Marshal(v)
	if err != nil {
		return err
	}
	_, err = o.w.Write(append(b, '\n'))
	return err
}

// decodeJSON decodes one JSON value, keeping numbers exact for jq.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the response is not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("the response is not one JSON value")
	}
	return v, nil
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = defaultIsTerminal

func defaultIsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress shows pages and items on stderr while --paginate runs, only when
// stderr is a terminal, so that logs of scripts stay clean.
type progress struct {
	w     io.Writer
	watch *watcher
	items int
	last  time.Time
	shown bool
}

func newProgress(w io.Writer, watch *watcher) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w, watch: watch}
}

// progressEvery is how often the line is redrawn.
const progressEvery = 100 * time.Millisecond

func (p *progress) item() {
	if p == nil {
		return
	}
	p.items++
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.show()
	}
}

func (p *progress) show() {
	p.shown = true
	fmt.Fprintf(p.w, "\r\x1b[Kcollab: %d pages, %d items", p.watch.pages.Load(), p.items)
}

func (p *progress) done() {
	if p == nil || !p.shown {
		return
	}
	p.show()
	fmt.Fprintln(p.w)
}
