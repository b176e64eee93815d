package collab_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// The external tests share the internal tests' mock client, token and log
// watch (see export_test.go) under the same names.
var (
	newMockClient = collab.NewMockClient
	watched       = collab.Watched
	testLogger    = collab.TestLogger
	fastRetry     = collab.FastRetry
)

const testToken = collab.TestToken

type mock = collab.Mock

// newFakeClient starts collabtest and returns an admin client for it.
func newFakeClient(t *testing.T, opts ...collab.ClientOption) (*collab.Client, *collabtest.Server) {
	t.Helper()
	srv := collabtest.NewTestServer(t) // closed, and checked for handler panics, when the test ends
	watched.Secret(srv.AdminToken)
	watched.Secret(srv.AdminOAuthToken)
	opts = append([]collab.ClientOption{collab.WithPrivateToken(srv.AdminToken), collab.WithoutRetries(), collab.WithLogger(testLogger)}, opts...)
	c, err := collab.NewClient(srv.URL, opts...)
	require.NoError(t, err)
	return c, srv
}

// clientAs returns a client for srv authenticated with token.
func clientAs(t *testing.T, srv *collabtest.Server, token string) *collab.Client {
	t.Helper()
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(watched.Secret(token)), collab.WithoutRetries(), collab.WithLogger(testLogger))
	require.NoError(t, err)
	return c
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// callCase is one method call checked against a mock: the request it must
// send, and whether it decodes a list of the fixture or the fixture itself.
type callCase struct {
	name         string
	run          func(c *collab.Client) (any, error)
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
			m.AssertRequest(tc.method, tc.path, tc.want)
			if tc.list {
				assert.Equal(t, []*T{want}, got)
			} else {
				assert.Equal(t, want, got)
			}
			m.Reply(404, `{"message":"404 Not found"}`)
			_, err = tc.run(c)
			assert.ErrorIs(t, err, collab.ErrNotFound)
		})
	}
}
