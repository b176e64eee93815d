package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/collabsvc/collab/internal/secretwatch"
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

// TestSecretWatchSeesRunnerErrors proves the check sees this package's
// errors and log lines, and catches a token.
func TestSecretWatchSeesRunnerErrors(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(403, `{"message":"403 Forbidden"}`)
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
