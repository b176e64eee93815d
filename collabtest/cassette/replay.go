package cassette

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// A Replayer answers requests from a Cassette, as an in-process transport
// (RoundTrip) or as a handler (ServeHTTP; collabtest.WithReplay serves one
// on the fake's address, with its tokens).
//
// A request gets the answer of the recorded exchange with the same method,
// path, query and body; a JSON body and a form body with the same fields
// are the same body. Authentication is not checked: any token is accepted,
// and secret values (see Recorder) match any value. Identical requests get
// the recorded answers in the recorded order, so that a read after a write
// gets the later answer; once all are used, the last one is given again.
//
// A request that matches nothing gets a *MismatchError from RoundTrip, or a
// 501 whose JSON message is that error's text from ServeHTTP. Webhook
// deliveries in the cassette are not served. A Replayer is safe for
// concurrent use.
type Replayer struct {
	c      *Cassette
	bodies []any // each exchange's request body, decoded

	mu   sync.Mutex
	used []int // times each exchange was served
}

// NewReplayer returns a Replayer of c; a nil c is an empty cassette.
func NewReplayer(c *Cassette) *Replayer {
	if c == nil {
		c = &Cassette{}
	}
	p := &Replayer{c: c, bodies: make([]any, len(c.Exchanges)), used: make([]int, len(c.Exchanges))}
	for i, e := range c.Exchanges {
		p.bodies[i] = bodyValue(e.Request.mediaType(), e.Request.Header.Get("Content-Type"), e.Request.Body())
	}
	return p
}

// A MismatchError is the answer to a request that matches no recorded
// exchange. It names the closest exchange and what differs from it.
type MismatchError struct {
	Method, Path string
	// Closest is the closest recorded exchange's index in the cassette, -1
	// when the cassette holds none of the request's method.
	Closest int
	Route   string       // the closest exchange's route
	Diffs   []Difference // what differs from the closest, at most a few
}

// Error names the request, the closest exchange and what differs; it holds
// no secret, since secret values are never compared.
func (e *MismatchError) Error() string {
	msg := "cassette: replay: no recorded exchange for " + e.Method + " " + e.Path
	if e.Closest < 0 {
		return msg + "; none recorded with that method"
	}
	parts := make([]string, len(e.Diffs))
	for i, d := range e.Diffs {
		parts[i] = fmt.Sprintf("%s (recorded %s, got %s)", d.Part, d.Recorded, d.Got)
	}
	return fmt.Sprintf("%s; the closest is #%d %s, which differs in %s", msg, e.Closest, e.Route, strings.Join(parts, ", "))
}

// Verify returns an error that lists the recorded exchanges no request
// used, nil when every one was used. Webhook deliveries are not counted.
func (p *Replayer) Verify() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var unused []string
	for i, e := range p.c.Exchanges {
		if p.used[i] == 0 && e.Kind == "" {
			unused = append(unused, fmt.Sprintf("#%d %s %s", i, e.Method, e.URL()))
		}
	}
	if len(unused) == 0 {
		return nil
	}
	return fmt.Errorf("cassette: replay: %d recorded exchanges were not used: %s", len(unused), strings.Join(unused, "; "))
}

// RoundTrip answers req from the cassette.
func (p *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req.Body)
	if err != nil {
		return nil, err
	}
	e, err := p.find(req, body)
	if err != nil {
		return nil, err
	}
	rec := &responseRecorder{header: http.Header{}}
	writeRecorded(rec, e, req.URL.Scheme+"://"+req.URL.Host)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)), StatusCode: rec.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: req,
	}, nil
}

// ServeHTTP answers r from the cassette.
func (p *Replayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeMessage(w, http.StatusBadRequest, "400 Bad Request: "+err.Error())
		return
	}
	e, err := p.find(r, body)
	if err != nil {
		writeMessage(w, http.StatusNotImplemented, err.Error())
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	writeRecorded(w, e, scheme+"://"+r.Host)
}

// maxBody bounds a request body the replayer reads, as the fake bounds it.
const maxBody = 1 << 20

// writeMessage answers with status and a JSON message, as the API does.
func writeMessage(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"message": msg}) // a string map always encodes
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeRecorded writes e's answer, with the recorded origin made origin.
func writeRecorded(w http.ResponseWriter, e *Exchange, origin string) {
	for k, vs := range e.Response.Header {
		for _, v := range vs {
			w.Header().Add(k, fromRecorded(v, origin))
		}
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write([]byte(fromRecorded(string(e.Response.Body()), origin)))
}

// find returns the exchange that answers r, and counts it as used.
func (p *Replayer) find(r *http.Request, body []byte) (*Exchange, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	got := request{method: r.Method, path: r.URL.EscapedPath(), query: r.URL.Query(),
		body: bodyValue(mt, r.Header.Get("Content-Type"), body)}
	p.mu.Lock()
	defer p.mu.Unlock()
	best, bestDiffs, match := -1, []Difference(nil), -1
	for i := range p.c.Exchanges {
		e := &p.c.Exchanges[i]
		if e.Kind != "" || e.Method != got.method {
			continue
		}
		diffs := got.diff(e, p.bodies[i])
		if len(diffs) == 0 {
			match = i // the first unused, else the last
			if p.used[i] == 0 {
				break
			}
			continue
		}
		if best < 0 || cost(diffs) < cost(bestDiffs) {
			best, bestDiffs = i, diffs
		}
	}
	if match >= 0 {
		p.used[match]++
		e := &p.c.Exchanges[match]
		if e.Status < 100 || e.Status > 999 {
			return nil, fmt.Errorf("cassette: replay: exchange #%d has no valid status (%d)", match, e.Status)
		}
		return e, nil
	}
	err := &MismatchError{Method: got.method, Path: got.path, Closest: best}
	if best >= 0 {
		err.Route, err.Diffs = p.c.Exchanges[best].Route, bestDiffs[:min(len(bestDiffs), 3)]
	}
	return nil, err
}

// request is a request as the replayer compares it.
type request struct {
	method, path string
	query        url.Values
	body         any
}

// cost ranks a candidate by its differences. A different path counts as
// much as three other differences, so that a request is closer to its own
// route's exchanges.
func cost(diffs []Difference) int {
	if len(diffs) > 0 && diffs[0].Part == "path" {
		return len(diffs) + 2
	}
	return len(diffs)
}

// diff lists how r differs from the recorded e, whose decoded body is
// recorded.
func (r request) diff(e *Exchange, recorded any) []Difference {
	var diffs []Difference
	if r.path != e.Path {
		diffs = append(diffs, Difference{Part: "path", Recorded: show(e.Path), Got: show(r.path)})
	}
	for _, k := range unionKeys(e.Query, r.query) {
		if isSecretKey(k) {
			continue
		}
		if a, b := e.Query[k], r.query[k]; !slices.Equal(a, b) {
			diffs = append(diffs, Difference{Part: fmt.Sprintf("query key %q", k), Recorded: showValues(a), Got: showValues(b)})
		}
	}
	d := differ{}
	d.value("", "", recorded, r.body)
	return append(diffs, d.found...)
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func showValues(v []string) string {
	if v == nil {
		return missing
	}
	return show(strings.Join(v, ","))
}

// bodyValue decodes a body for comparison: a form or a multipart form as
// an object of its fields (a field given once as a string), JSON as
// itself, anything else as a string, and nothing as nil.
func bodyValue(mediaType, contentType string, b []byte) any {
	if len(b) == 0 {
		return nil
	}
	switch mediaType {
	case "application/x-www-form-urlencoded":
		if v, err := url.ParseQuery(string(b)); err == nil {
			return valuesObject(v)
		}
	case "multipart/form-data":
		if v, err := multipartObject(contentType, b); err == nil {
			return v
		}
	}
	if v, err := decodeJSON(b); err == nil {
		return v
	}
	return string(b)
}

func valuesObject(v url.Values) map[string]any {
	out := make(map[string]any, len(v))
	for k, vs := range v {
		if len(vs) == 1 {
			out[k] = vs[0]
			continue
		}
		list := make([]any, len(vs))
		for i, s := range vs {
			list[i] = s
		}
		out[k] = list
	}
	return out
}

// multipartObject reads a multipart form into an object of its parts: a
// field as its value, a file as {"filename", "content"}. The boundary, which
// changes with every request, is left out. With an error, it returns the
// parts read before it.
func multipartObject(contentType string, b []byte) (map[string]any, error) {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return nil, err
	}
	mr := multipart.NewReader(bytes.NewReader(b), params["boundary"])
	out := map[string]any{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return out, err
		}
		if part.FileName() != "" {
			out[part.FormName()] = map[string]any{"filename": part.FileName(), "content": string(content)}
		} else {
			out[part.FormName()] = string(content)
		}
	}
}

// responseRecorder collects what writeRecorded writes, for RoundTrip: the
// response is built without an HTTP round trip.
type responseRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) WriteHeader(status int)      { r.status = status }
func (r *responseRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }
