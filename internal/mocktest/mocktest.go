// Package mocktest is the httpmock transport both test suites use: it
// answers each request with the next queued reply and records what it was
// sent, so a test can assert the method, the escaped path, the query or form
// values and the headers of a call.
package mocktest

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jarcoal/httpmock"
)

// Recorded is one request the mock saw, with its body read.
type Recorded struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Form   url.Values // the url-encoded body, if any
	Header http.Header
	Body   []byte
}

type reply struct {
	status int
	body   string
	header http.Header
	err    error
}

// Mock answers with the queued replies in order; once the queue is empty
// the last reply repeats.
type Mock struct {
	t testing.TB
	// Inspect, when set, sees each request before its body is read.
	Inspect func(*http.Request)

	mu        sync.Mutex
	replies   []reply
	lastReply *reply
	calls     []Recorded
}

// New returns a mock with nothing queued.
func New(t testing.TB) *Mock { return &Mock{t: t} }

// Client returns an *http.Client whose every request the mock answers.
func (m *Mock) Client() *http.Client {
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(m.respond)
	return &http.Client{Transport: mt}
}

// Reply queues a response; header holds name, value pairs. The body is
// served as JSON unless a Content-Type pair says otherwise.
func (m *Mock) Reply(status int, body string, header ...string) *Mock {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return m.queue(reply{status: status, body: body, header: h})
}

// ReplyFile queues a response whose body is testdata/name.
func (m *Mock) ReplyFile(status int, name string, header ...string) *Mock {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		m.t.Fatalf("mocktest: %v", err)
	}
	return m.Reply(status, string(b), header...)
}

// Fail queues a transport error.
func (m *Mock) Fail(err error) *Mock { return m.queue(reply{err: err}) }

func (m *Mock) queue(r reply) *Mock {
	m.mu.Lock()
	m.replies = append(m.replies, r)
	m.mu.Unlock()
	return m
}

func (m *Mock) respond(req *http.Request) (*http.Response, error) {
	if m.Inspect != nil {
		m.Inspect(req)
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	rec := Recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Header: req.Header.Clone(), Body: body}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		rec.Form, _ = url.ParseQuery(string(body))
	}
	m.mu.Lock()
	m.calls = append(m.calls, rec)
	if len(m.replies) > 0 {
		m.lastReply, m.replies = &m.replies[0], m.replies[1:]
	}
	r := m.lastReply
	m.mu.Unlock()
	if r == nil {
		return httpmock.NewStringResponse(http.StatusNotImplemented, `{"message":"no reply queued"}`), nil
	}
	if r.err != nil {
		return nil, r.err
	}
	resp := httpmock.NewStringResponse(r.status, r.body)
	resp.Header = r.header.Clone()
	resp.Request = req
	return resp, nil
}

// Last returns the most recent request; the test fails if there is none.
func (m *Mock) Last() Recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.calls) == 0 {
		m.t.Fatalf("mocktest: no request was sent")
	}
	return m.calls[len(m.calls)-1]
}

// Count returns how many requests were sent.
func (m *Mock) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// Params returns the values a request carried: its url-encoded body for a
// POST or PUT that has one, its query otherwise.
func (r Recorded) Params() url.Values {
	if (r.Method == http.MethodPost || r.Method == http.MethodPut) && r.Form != nil {
		return r.Form
	}
	return r.Query
}

// AssertCall checks that the last request had this method and escaped path
// and carried exactly want (see Params), and returns it.
func (m *Mock) AssertCall(method, escapedPath string, want url.Values) Recorded {
	m.t.Helper()
	rec := m.Last()
	if rec.Method != method {
		m.t.Errorf("method: got %s, want %s", rec.Method, method)
	}
	if rec.Path != escapedPath {
		m.t.Errorf("escaped path: got %s, want %s", rec.Path, escapedPath)
	}
	got := rec.Params()
	if len(want) == 0 && len(got) != 0 || len(want) != 0 && !reflect.DeepEqual(want, got) {
		m.t.Errorf("parameters: got %v, want %v", got, want)
	}
	return rec
}

// Calls returns every request sent so far, oldest first.
func (m *Mock) Calls() []Recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Recorded(nil), m.calls...)
}
