package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// NewEchoServer starts a loopback server that answers every request with an
// error whose body repeats the whole request (method, URL, every header and
// the body) the way careless or hostile servers do: by turns as a JSON
// message, JSON validation fields, a JSON "error", a bare JSON array, an
// HTML proxy page, plain text with control characters, and a form-encoded
// echo. It counts the requests it served.
func NewEchoServer(t testing.TB) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var head strings.Builder
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&head, "%s: %s\n", k, strings.Join(r.Header[k], ", "))
		}
		// Error texts are cut short, so the body and the headers take turns
		// at the front where the cut cannot hide them.
		d := string(body) + "\n" + head.String() + r.Method + " " + r.URL.RequestURI()
		if i%2 == 0 {
			d = head.String() + "\n" + string(body) + "\n" + r.Method + " " + r.URL.RequestURI()
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		switch i % 7 {
		case 0:
			writeEcho(w, 401, "application/json", `{"message":`+q("401 Unauthorized "+d)+`}`)
		case 1:
			writeEcho(w, 400, "application/json", `{"message":{"token":[`+q(d)+`],"base":[`+q("\x1b[31m"+d)+`]}}`)
		case 2:
			writeEcho(w, 403, "application/json", `{"error":`+q(d)+`}`)
		case 3:
			writeEcho(w, 422, "application/json", `[`+q(d)+`]`)
		case 4:
			writeEcho(w, 502, "text/html", "<html><body><h1>502 Bad Gateway</h1><pre>"+html.EscapeString(d)+"</pre><!-- "+d+" --></body></html>")
		case 5:
			writeEcho(w, 404, "text/plain", "\x1b]0;owned\x07\r\n"+d+"\u202e")
		default:
			writeEcho(w, 500, "application/json", `{"message":`+q(url.QueryEscape(d))+`}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func writeEcho(w http.ResponseWriter, status int, ctype, body string) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// Call is the outcome of one method called by Sweep.
type Call struct {
	Name string // Service.Method
	Err  error  // the error it returned or yielded, nil if none
}

// Sweep calls every exported method of every service recv holds (an
// exported pointer field whose type has methods), or, when it holds none,
// every exported method of recv itself, except those
// named in skip ("Method" or "Service.Method"), with arguments made by
// Args. A method returning an iterator is ranged over for at most three
// elements; any io.Closer returned is closed. A panic is reported as the
// call's error.
func Sweep(ctx context.Context, recv any, a Args, skip ...string) []Call {
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[s] = true
	}
	var calls []Call
	v := reflect.ValueOf(recv)
	targets := []reflect.Value{v}
	names := []string{v.Type().Elem().Name()}
	if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
		for i := 0; i < v.Elem().NumField(); i++ {
			f := v.Elem().Field(i)
			sf := v.Elem().Type().Field(i)
			if sf.IsExported() && f.Kind() == reflect.Pointer && !f.IsNil() && f.Type().NumMethod() > 0 {
				targets = append(targets, f)
				names = append(names, sf.Name)
			}
		}
	}
	for ti, t := range targets {
		for m := 0; m < t.NumMethod(); m++ {
			name := t.Type().Method(m).Name
			full := names[ti] + "." + name
			if skipped[name] || skipped[full] || (ti == 0 && len(targets) > 1) {
				continue
			}
			calls = append(calls, Call{Name: full, Err: a.call(ctx, t.Method(m))})
		}
	}
	return calls
}

// Args makes the arguments Sweep passes: String for every string (Field,
// when set, for one inside a struct or slice), 1 for
// every number and every empty interface (an id), true for every bool, a
// fixed time for every time.Time, a filled value behind every pointer, and
// one element in every slice.
type Args struct {
	String string
	Field  string // for strings inside structs and slices, if not empty
}

var (
	ctxType    = reflect.TypeFor[context.Context]()
	errType    = reflect.TypeFor[error]()
	readerType = reflect.TypeFor[io.Reader]()
	writerType = reflect.TypeFor[io.Writer]()
	closerType = reflect.TypeFor[io.Closer]()
	timeType   = reflect.TypeFor[time.Time]()
	sweepTime  = time.Date(2016, 1, 4, 15, 31, 51, 0, time.UTC)
)

func (a Args) call(ctx context.Context, m reflect.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	mt := m.Type()
	in := make([]reflect.Value, mt.NumIn())
	for i := range in {
		if mt.IsVariadic() && i == mt.NumIn()-1 {
			in[i] = reflect.MakeSlice(mt.In(i), 0, 0)
			continue
		}
		in[i] = a.value(ctx, mt.In(i), 0)
	}
	var out []reflect.Value
	if mt.IsVariadic() {
		out = m.CallSlice(in)
	} else {
		out = m.Call(in)
	}
	for _, o := range out {
		switch {
		case o.Type() == errType:
			if !o.IsNil() {
				err = o.Interface().(error)
			}
		case o.Kind() == reflect.Func && o.Type().NumIn() == 1 && !o.IsNil():
			if e := rangeOver(o); e != nil {
				err = e
			}
		case o.Type().Implements(closerType) && (o.Kind() != reflect.Pointer || !o.IsNil()):
			if e := o.Interface().(io.Closer).Close(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

// rangeOver runs an iter.Seq or iter.Seq2 for at most three elements and
// returns the first error it yields.
func rangeOver(seq reflect.Value) error {
	yt := seq.Type().In(0)
	if yt.Kind() != reflect.Func || yt.NumOut() != 1 || yt.Out(0).Kind() != reflect.Bool {
		return nil
	}
	var got error
	n := 0
	yield := reflect.MakeFunc(yt, func(args []reflect.Value) []reflect.Value {
		n++
		for _, a := range args {
			if a.Type() == errType && !a.IsNil() {
				got = a.Interface().(error)
			}
		}
		return []reflect.Value{reflect.ValueOf(got == nil && n < 3)}
	})
	seq.Call([]reflect.Value{yield})
	return got
}

func (a Args) value(ctx context.Context, t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	switch {
	case t == ctxType:
		return reflect.ValueOf(ctx)
	case t == readerType:
		return reflect.ValueOf(io.Reader(strings.NewReader(a.String)))
	case t == writerType:
		return reflect.ValueOf(io.Writer(io.Discard))
	case t == timeType:
		return reflect.ValueOf(sweepTime) // a zero time is no time
	case t.Kind() == reflect.Interface && t.NumMethod() == 0:
		v.Set(reflect.ValueOf(1)) // an id where any integer or path is taken
		return v
	}
	if depth > 4 {
		return v
	}
	switch t.Kind() {
	case reflect.String:
		if depth > 0 && a.Field != "" {
			v.SetString(a.Field)
		} else {
			v.SetString(a.String)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(a.value(ctx, t.Elem(), depth+1))
	case reflect.Slice:
		v.Set(reflect.MakeSlice(t, 1, 1))
		v.Index(0).Set(a.value(ctx, t.Elem(), depth+1))
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				v.Field(i).Set(a.value(ctx, t.Field(i).Type, depth+1))
			}
		}
	}
	return v
}
