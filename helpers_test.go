package collab

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// assertCall checks the method, escaped path (under /api/v3) and token
// header of the last request, and that its query (GET/DELETE) or form body
// (POST/PUT) holds exactly want.
func (m mock) assertCall(method, escapedPath string, want url.Values) mocktest.Recorded {
	m.t.Helper()
	rec := m.AssertCall(method, "/api/v3/"+strings.TrimPrefix(escapedPath, "/"), want)
	assert.Equal(m.t, testToken, rec.Header.Get("PRIVATE-TOKEN"), "token header")
	if method == http.MethodPost || method == http.MethodPut {
		assert.Empty(m.t, rec.Query, "POST/PUT parameters belong in the body")
	}
	return rec
}

// newFakeClient starts collabtest and returns an admin client for it.
func newFakeClient(t *testing.T, opts ...ClientOption) (*Client, *collabtest.Server) {
	t.Helper()
	srv := collabtest.NewTestServer(t) // closed, and checked for handler panics, when the test ends
	watched.Secret(srv.AdminToken)
	watched.Secret(srv.AdminOAuthToken)
	opts = append([]ClientOption{WithPrivateToken(srv.AdminToken), WithoutRetries(), WithLogger(testLogger)}, opts...)
	c, err := NewClient(srv.URL, opts...)
	require.NoError(t, err)
	return c, srv
}

// clientAs returns a client for srv authenticated with token.
func clientAs(t *testing.T, srv *collabtest.Server, token string) *Client {
	t.Helper()
	c, err := NewClient(srv.URL, WithPrivateToken(watched.Secret(token)), WithoutRetries(), WithLogger(testLogger))
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
				m.Reply(200, "["+string(body)+"]")
			} else {
				m.Reply(200, string(body))
			}
			got, err := tc.run(c)
			require.NoError(t, err)
			m.assertCall(tc.method, tc.path, tc.want)
			if tc.list {
				assert.Equal(t, []*T{want}, got)
			} else {
				assert.Equal(t, want, got)
			}
			m.Reply(404, `{"message":"404 Not found"}`)
			_, err = tc.run(c)
			assert.ErrorIs(t, err, ErrNotFound)
		})
	}
}
