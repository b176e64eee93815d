package collab

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/collabsvc/collab/internal/suite"
)

// TestMain runs the suite, then fails it if any goroutine outlived it or if
// any error or debug log line produced by any test carried a token in use.
func TestMain(m *testing.M) { suite.Main(m, watched) }

// watched collects every error text and debug log line of the suite, and
// every token the suite's clients were given.
var watched = suite.NewRecorder(nil, testToken)

// testLogger logs every client's requests and retries into watched.
var testLogger = slog.New(slog.NewTextHandler(watched, &slog.HandlerOptions{Level: slog.LevelDebug}))

// testToken is the private token every mock client sends.
const testToken = "secret-test-token-5f2a"

// mock is the shared recording transport, with this API's call check.
type mock struct {
	*mocktest.Mock
	t *testing.T
}

// newMockClient returns a client on https://collab.example.com wired to a mock.
func newMockClient(t *testing.T, opts ...ClientOption) (*Client, mock) {
	t.Helper()
	m := mock{mocktest.New(t), t}
	opts = append([]ClientOption{WithPrivateToken(testToken), WithHTTPClient(m.Client()), WithoutRetries(), WithLogger(testLogger)}, opts...)
	c, err := NewClient("https://collab.example.com", opts...)
	require.NoError(t, err)
	return c, m
}

// AssertRequest checks the method, escaped path (under /api/v3) and token
// header of the last request, and that its query (GET/DELETE) or form body
// (POST/PUT) holds exactly want.
func (m mock) AssertRequest(method, escapedPath string, want url.Values) mocktest.Recorded {
	m.t.Helper()
	rec := m.AssertCall(method, "/api/v3/"+strings.TrimPrefix(escapedPath, "/"), want)
	assert.Equal(m.t, testToken, rec.Header.Get("PRIVATE-TOKEN"), "token header")
	if method == http.MethodPost || method == http.MethodPut {
		assert.Empty(m.t, rec.Query, "POST/PUT parameters belong in the body")
	}
	return rec
}
