package runner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/secretwatch"
	"github.com/jarcoal/httpmock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain runs the suite, then fails it if a goroutine outlived it or if
// any error or debug log line of any test carried a runner or build token.
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

// watched collects every error text and debug log line of the suite.
var watched = &secretLog{}

// testLogger logs every client's requests, retries and trace resyncs into watched.
var testLogger = slog.New(slog.NewTextHandler(watched, &slog.HandlerOptions{Level: slog.LevelDebug}))

// secretPatterns match the tokens of this suite and of the fake server:
// runner tokens, project (build) tokens and private tokens.
var secretPatterns = regexp.MustCompile(regexp.QuoteMeta(testRunnerToken) + "|" + regexp.QuoteMeta(testBuildToken) +
	`|(rtok|runner|ptok)-[0-9a-f]{16,}`)

type secretLog struct {
	mu    sync.Mutex
	lines []string
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

func (w *secretLog) check() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, line := range w.lines {
		if tok := secretPatterns.FindString(line); tok != "" {
			return fmt.Errorf("secret check: token %.6s… appears in %q", tok, line)
		}
	}
	return nil
}

const (
	testRunnerToken = "rt-7d1e0c5a9b"
	testBuildToken  = "bt-3f9a1c77e2d04b5c"
)

// recorded is one request the mock saw, body read.
type recorded struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Form   url.Values
	Header http.Header
	Body   []byte
}

type reply struct {
	status int
	body   string
	header http.Header
	err    error
}

// mock answers each request with the next queued reply; the last one
// repeats when the queue is empty.
type mock struct {
	t       *testing.T
	mu      sync.Mutex
	replies []reply
	calls   []recorded
	// lastReply repeats once the queue is empty.
	lastReply *reply
	inspect   func(*http.Request) // optional: sees the request before its body is read
}

func newMockClient(t *testing.T, opts ...collab.ClientOption) (*Client, *mock) {
	t.Helper()
	m := &mock{t: t}
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(m.respond)
	opts = append([]collab.ClientOption{collab.WithHTTPClient(&http.Client{Transport: mt}), collab.WithoutRetries(), collab.WithLogger(testLogger)}, opts...)
	c, err := NewClient("https://collab.example.com", opts...)
	require.NoError(t, err)
	c.uploadBackoff = func(int) time.Duration { return 0 }
	return c, m
}

func (m *mock) reply(status int, body string, header ...string) *mock {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	m.mu.Lock()
	m.replies = append(m.replies, reply{status: status, body: body, header: h})
	m.mu.Unlock()
	return m
}

func (m *mock) replyFile(status int, name string) *mock {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(m.t, err)
	return m.reply(status, string(b))
}

func (m *mock) fail(err error) *mock {
	m.mu.Lock()
	m.replies = append(m.replies, reply{err: err})
	m.mu.Unlock()
	return m
}

func (m *mock) respond(req *http.Request) (*http.Response, error) {
	if m.inspect != nil {
		m.inspect(req)
	}
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
	if len(m.replies) > 0 {
		m.lastReply, m.replies = &m.replies[0], m.replies[1:]
	}
	if m.lastReply == nil {
		m.mu.Unlock()
		return httpmock.NewStringResponse(http.StatusNotImplemented, `{"message":"no reply queued"}`), nil
	}
	r := *m.lastReply
	m.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	resp := httpmock.NewStringResponse(r.status, r.body)
	resp.Header = r.header.Clone()
	resp.Request = req
	return resp, nil
}

func (m *mock) last() recorded {
	m.mu.Lock()
	defer m.mu.Unlock()
	require.NotEmpty(m.t, m.calls, "no request was sent")
	return m.calls[len(m.calls)-1]
}

func (m *mock) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// assertCall checks the method, the escaped path under /ci/api/v1, that no
// PRIVATE-TOKEN was sent, and the query (GET/DELETE) or form body values.
func (m *mock) assertCall(method, escapedPath string, want url.Values) recorded {
	m.t.Helper()
	rec := m.last()
	assert.Equal(m.t, method, rec.Method, "method")
	assert.Equal(m.t, "/ci/api/v1/"+strings.TrimPrefix(escapedPath, "/"), rec.Path, "escaped path")
	assert.Empty(m.t, rec.Header.Get("PRIVATE-TOKEN"), "no PRIVATE-TOKEN on the runner API")
	got := rec.Query
	if method == http.MethodPost || method == http.MethodPut {
		if rec.Form != nil {
			got = rec.Form
		}
	}
	if len(want) == 0 {
		assert.Empty(m.t, got, "parameters")
	} else {
		assert.Equal(m.t, want, got, "parameters")
	}
	return rec
}

// TestSecretWatchSeesRunnerErrors proves the check sees this package's
// errors and log lines, and catches a token.
func TestSecretWatchSeesRunnerErrors(t *testing.T) {
	c, m := newMockClient(t)
	m.reply(403, `{"message":"403 Forbidden"}`)
	_, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
	require.Error(t, err)
	watched.mu.Lock()
	joined := strings.Join(watched.lines, "\n")
	watched.mu.Unlock()
	assert.Contains(t, joined, err.Error())
	assert.Contains(t, joined, "collab: request")
	assert.Error(t, (&secretLog{lines: []string{"token=" + testBuildToken}}).check())
	assert.Error(t, (&secretLog{lines: []string{"rtok-0123456789abcdef0123"}}).check())
}
