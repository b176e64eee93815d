package collab

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/secretwatch"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain runs the suite, then fails it if any goroutine outlived it or if
// any error or debug log line produced by any test carried a token in use.
func TestMain(m *testing.M) {
	secretwatch.SetObserver(watched.record)
	code := m.Run()
	if code == 0 {
		if err := watched.check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// watched collects every error text and debug log line of the suite, and
// every token the suite's clients were given.
var watched = &secretLog{tokens: map[string]bool{testToken: true}}

// testLogger logs every client's requests and retries into watched.
var testLogger = slog.New(slog.NewTextHandler(watched, &slog.HandlerOptions{Level: slog.LevelDebug}))

type secretLog struct {
	mu     sync.Mutex
	lines  []string
	tokens map[string]bool
}

func (w *secretLog) record(s string) {
	w.mu.Lock()
	w.lines = append(w.lines, s)
	w.mu.Unlock()
}

func (w *secretLog) Write(p []byte) (int, error) {
	w.record(string(p))
	return len(p), nil
}

// token registers a secret the suite uses.
func (w *secretLog) token(tok string) string {
	w.mu.Lock()
	w.tokens[tok] = true
	w.mu.Unlock()
	return tok
}

func (w *secretLog) check() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range w.lines {
		for tok := range w.tokens {
			if strings.Contains(line, tok) {
				return fmt.Errorf("secret check: a token appears in %q", line)
			}
		}
	}
	return nil
}

// testToken is the private token every mock client sends.
const testToken = "secret-test-token-5f2a"

// recorded is one request the mock transport saw, with its body read.
type recorded struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Form   url.Values // url-encoded body, if any
	Header http.Header
	Body   []byte
}

// mock is an httpmock transport that answers every request with the next
// queued reply (the last reply repeats) and records what it was sent.
type mock struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	calls   []recorded
	stale   bool // the only queued reply has been used and now repeats
}

type reply struct {
	status int
	body   string
	header http.Header
	err    error
}

// newMockClient returns a client on https://collab.example.com wired to a mock.
func newMockClient(t *testing.T, opts ...ClientOption) (*Client, *mock) {
	t.Helper()
	m := &mock{t: t}
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(m.respond)
	opts = append([]ClientOption{WithPrivateToken(testToken), WithHTTPClient(&http.Client{Transport: mt}), WithoutRetries(), WithLogger(testLogger)}, opts...)
	c, err := NewClient("https://collab.example.com", opts...)
	require.NoError(t, err)
	return c, m
}

// reply queues a response with a JSON (or any) body.
func (m *mock) reply(status int, body string, header ...string) *mock {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return m.queue(reply{status: status, body: body, header: h})
}

func (m *mock) queue(r reply) *mock {
	m.mu.Lock()
	if m.stale {
		m.replies, m.stale = nil, false
	}
	m.replies = append(m.replies, r)
	m.mu.Unlock()
	return m
}

// replyFile queues a 200 with the body of testdata/name.
func (m *mock) replyFile(status int, name string, header ...string) *mock {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(m.t, err)
	return m.reply(status, string(b), header...)
}

// fail queues a transport error.
func (m *mock) fail(err error) *mock {
	return m.queue(reply{err: err})
}

func (m *mock) respond(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	rec := recorded{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Header: req.Header.Clone(), Body: body}
	if strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		rec.Form, _ = url.ParseQuery(string(body))
	}
	m.mu.Lock()
	m.calls = append(m.calls, rec)
	if len(m.replies) == 0 {
		m.mu.Unlock()
		return httpmock.NewStringResponse(http.StatusNotImplemented, `{"message":"no reply queued"}`), nil
	}
	r := m.replies[0]
	if len(m.replies) > 1 {
		m.replies = m.replies[1:]
	} else {
		m.stale = true
	}
	m.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	resp := httpmock.NewStringResponse(r.status, r.body)
	resp.Header = r.header.Clone()
	resp.Request = req
	return resp, nil
}

// last returns the most recent request.
func (m *mock) last() recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	require.NotEmpty(m.t, m.calls, "no request was sent")
	return m.calls[len(m.calls)-1]
}

// count returns how many requests were sent.
func (m *mock) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// assertCall checks the method, escaped path and token header of the last
// request, and that its query (GET/DELETE) or form body (POST/PUT) holds
// exactly want.
func (m *mock) assertCall(method, escapedPath string, want url.Values) recorded {
	m.t.Helper()
	rec := m.last()
	assert.Equal(m.t, method, rec.Method, "method")
	assert.Equal(m.t, "/api/v3/"+strings.TrimPrefix(escapedPath, "/"), rec.Path, "escaped path")
	assert.Equal(m.t, testToken, rec.Header.Get("PRIVATE-TOKEN"), "token header")
	got := rec.Query
	if method == http.MethodPost || method == http.MethodPut {
		got = rec.Form
		assert.Empty(m.t, rec.Query, "POST/PUT parameters belong in the body")
	}
	if len(want) == 0 {
		assert.Empty(m.t, got, "parameters")
	} else {
		assert.Equal(m.t, want, got, "parameters")
	}
	return rec
}

// newFakeClient starts collabtest and returns an admin client for it.
func newFakeClient(t *testing.T, opts ...ClientOption) (*Client, *collabtest.Server) {
	t.Helper()
	srv := collabtest.NewServer()
	t.Cleanup(func() {
		assert.Zero(t, srv.Panics(), "collabtest recovered panics")
		srv.Close()
	})
	watched.token(srv.AdminToken)
	watched.token(srv.AdminOAuthToken)
	opts = append([]ClientOption{WithPrivateToken(srv.AdminToken), WithoutRetries(), WithLogger(testLogger)}, opts...)
	c, err := NewClient(srv.URL, opts...)
	require.NoError(t, err)
	return c, srv
}

// clientAs returns a client for srv authenticated with token.
func clientAs(t *testing.T, srv *collabtest.Server, token string) *Client {
	t.Helper()
	c, err := NewClient(srv.URL, WithPrivateToken(watched.token(token)), WithoutRetries(), WithLogger(testLogger))
	require.NoError(t, err)
	return c
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// callCase is one method call checked against a mock: the request it must
// send, and whether it decodes a list of the fixture or the fixture itself.
type callCase struct {
	name         string
	run          func(c *Client) (any, error)
	method, path string
	want         url.Values
	list         bool
}

// runCallCases runs each case against a mock answering with fixture (in an
// array for lists), checks the request and that every field decoded into
// want, then checks a 404 surfaces as ErrNotFound.
func runCallCases[T any](t *testing.T, fixture string, want *T, cases []callCase) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", fixture))
	require.NoError(t, err)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, m := newMockClient(t)
			if tc.list {
				m.reply(200, "["+string(body)+"]")
			} else {
				m.reply(200, string(body))
			}
			got, err := tc.run(c)
			require.NoError(t, err)
			m.assertCall(tc.method, tc.path, tc.want)
			if tc.list {
				assert.Equal(t, []*T{want}, got)
			} else {
				assert.Equal(t, want, got)
			}
			m.reply(404, `{"message":"404 Not found"}`)
			_, err = tc.run(c)
			assert.ErrorIs(t, err, ErrNotFound)
		})
	}
}
