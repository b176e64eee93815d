package collabtest_test

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogsUseTheStableKeys: the request log names the route of a call, and
// the delivery log the kind and attempt, never a token.
func TestLogsUseTheStableKeys(t *testing.T) {
	logs := &lockedBuffer{}
	s := collabtest.NewTestServer(t, collabtest.WithLog(slog.New(slog.NewTextHandler(logs, nil))))
	pid := s.AddProject(s.AdminID, "Logged", 0)
	s.AddReceiver(pid).Set(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v3/projects/1/issues", nil)
	require.NoError(t, err)
	req.Header.Set("PRIVATE-TOKEN", s.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	s.AddIssue(pid, s.AdminID, "logged")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.WaitDeliveries(ctx, 1)
	require.NoError(t, err)

	assert.Contains(t, logs.String(), `route="GET /api/v3/projects/{id}/issues"`)
	assert.Contains(t, logs.String(), `kind="Issue Hook"`)
	assert.Contains(t, logs.String(), "attempt=1")
	assert.NotContains(t, logs.String(), s.AdminToken)
}
