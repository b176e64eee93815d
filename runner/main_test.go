package runner

import (
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs the suite, then fails it if a goroutine outlived it or if
// any error or debug log line of any test carried a runner or build token.
func TestMain(m *testing.M) { suite.Main(m, watched) }

const (
	testRunnerToken = "rt-7d1e0c5a9b"
	testBuildToken  = "bt-3f9a1c77e2d04b5c"
)

// watched collects every error text and debug log line of the suite. Its
// pattern also matches the fake server's runner, project and private tokens.
var watched = suite.NewRecorder(fakeTokens, testRunnerToken, testBuildToken)

// fakeTokens matches the tokens collabtest makes.
var fakeTokens = regexp.MustCompile(`(rtok|runner|ptok)-[0-9a-f]{16,}`)

// testLogger logs every client's requests, retries and trace resyncs into watched.
var testLogger = slog.New(slog.NewTextHandler(watched, &slog.HandlerOptions{Level: slog.LevelDebug}))

// mock is the shared recording transport, with the runner API's call check.
type mock struct {
	*mocktest.Mock
	t *testing.T
}

func newMockClient(t *testing.T, opts ...collab.ClientOption) (*Client, mock) {
	t.Helper()
	m := mock{mocktest.New(t), t}
	opts = append([]collab.ClientOption{collab.WithHTTPClient(m.Client()), collab.WithoutRetries(), collab.WithLogger(testLogger)}, opts...)
	c, err := NewClient("https://collab.example.com", opts...)
	require.NoError(t, err)
	c.uploadBackoff = func(int) time.Duration { return 0 }
	return c, m
}

// assertCall checks the method, the escaped path under /ci/api/v1, that no
// PRIVATE-TOKEN was sent, and the query (GET/DELETE) or form body values.
func (m mock) assertCall(method, escapedPath string, want url.Values) mocktest.Recorded {
	m.t.Helper()
	rec := m.AssertCall(method, "/ci/api/v1/"+strings.TrimPrefix(escapedPath, "/"), want)
	assert.Empty(m.t, rec.Header.Get("PRIVATE-TOKEN"), "no PRIVATE-TOKEN on the runner API")
	return rec
}

// TestNoSecretInAnyRunnerError calls every method of the runner client,
// with a token for every string argument (tokens are plain strings here),
// against a server that repeats the whole request in its errors, and checks
// that no error text or log line carries the token and that every error
// reads as one line.
func TestNoSecretInAnyRunnerError(t *testing.T) {
	srv, served := suite.NewEchoServer(t)
	secret := watched.Secret("rsweep-" + testRunnerToken + "-91ab")
	c, err := NewClient(srv.URL, collab.WithoutRetries(), collab.WithLogger(testLogger))
	require.NoError(t, err)
	calls := suite.Sweep(context.Background(), c, suite.Args{String: secret, Field: "x-field"}, "API")
	require.NotEmpty(t, calls)
	assert.Positive(t, served.Load(), "the calls reached the server")
	for _, call := range calls {
		if call.Err == nil {
			continue
		}
		msg := call.Err.Error()
		watched.Record(msg)
		assert.NotContains(t, msg, secret, call.Name)
		assert.False(t, strings.ContainsAny(msg, "\n\r\x1b\x07\u202e"), "%s: %q", call.Name, msg)
		assert.NotContains(t, msg, "panic", call.Name)
	}
	require.NoError(t, watched.Check())
	for _, leak := range []string{"token=" + testBuildToken, "rtok-0123456789abcdef0123"} {
		r := suite.NewRecorder(fakeTokens, testBuildToken)
		r.Record(leak)
		assert.Error(t, r.Check(), leak)
	}
}
