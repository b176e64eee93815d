package collabtest

import (
	"bytes"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the deliverer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogsUseTheStableKeys: the request log names the route of a call, and
// the delivery log the kind and attempt, never a token.
func TestLogsUseTheStableKeys(t *testing.T) {
	var logs syncBuffer
	s := NewTestServer(t, WithLog(slog.New(slog.NewTextHandler(&logs, nil))))
	req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v3/projects/1/issues", nil)
	require.NoError(t, err)
	req.Header.Set("PRIVATE-TOKEN", s.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Contains(t, logs.String(), `route="GET /api/v3/projects/{id}/issues"`)

	rc := newReceiver(t, false, nil)
	d := newDeliverer(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(d.close)
	d.tokens[3] = "s3cret-token"
	d.enqueue(testJob(3, rc.URL+"/hook", `{}`))
	d.waitIdle(t)
	assert.Contains(t, logs.String(), `kind="Issue Hook"`)
	assert.Contains(t, logs.String(), "attempt=1")
	assert.NotContains(t, logs.String(), "s3cret-token")
	assert.NotContains(t, logs.String(), s.AdminToken)
}
