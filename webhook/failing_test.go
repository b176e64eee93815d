package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the workers' concurrent logging.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records decodes the JSON log lines whose message is msg.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// issueUpdated is the issue payload file with its updated_at set to at: a
// later state of the same issue.
func issueUpdated(t *testing.T, file, at string) []byte {
	var body map[string]any
	require.NoError(t, json.Unmarshal(readFile(t, file), &body))
	body["object_attributes"].(map[string]any)["updated_at"] = at
	b, err := json.Marshal(body)
	require.NoError(t, err)
	return b
}

// TestPanickingCallbackIsLoggedAndReported: a receiver written from the
// guide, with no Logger, whose callback reads e.Project, which one payload
// (gitlabce-issue-2) lacks. Each failed attempt is logged once through
// slog.Default, with the delivery's id, kind, attempt, error and stack;
// /healthz answers 503, not progressing, naming the delivery and the issue
// whose later deliveries wait behind it, while another issue is handled.
// Once the callback is fixed, all is handled and /healthz is healthy again.
func TestPanickingCallbackIsLoggedAndReported(t *testing.T) {
	logs := &syncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	var fixed atomic.Bool
	h := newHandler(t, Options{RetryMin: time.Millisecond, RetryMax: 20 * time.Millisecond, MaxAttempts: 1000,
		OnIssue: func(ctx context.Context, e *IssueEvent) error {
			if fixed.Load() && e.Project == nil {
				return nil
			}
			if e.Project.Name == "" { // panics when the payload has no project
				return errors.New("a project with no name")
			}
			return nil
		},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	var once sync.Once
	var errServe error
	stop := func() error { once.Do(func() { cancel(); errServe = <-served }); return errServe }
	t.Cleanup(func() { _ = stop() })
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	for _, body := range [][]byte{
		readFile(t, "payloads/gitlabce-issue-2.json"),                             // issue 301, no project
		issueUpdated(t, "payloads/gitlabce-issue-1.json", "2013-12-03T17:16:43Z"), // issue 301 later: waits behind it
		issueUpdated(t, "payloads/gitlabce-issue-1.json", "2013-12-03T17:17:43Z"),
		readFile(t, "payloads/zulip-issue-1.json"), // another issue: handled
	} {
		req, err := http.NewRequest(http.MethodPost, base+"/hook", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderEvent, string(KindIssue))
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	require.Eventually(t, func() bool { st := h.Stats(); return st.Handled == 1 && st.Retried >= 3 },
		10*time.Second, time.Millisecond)

	healthz := func() (int, Health) {
		t.Helper()
		resp, err := client.Get(base + "/healthz")
		require.NoError(t, err)
		defer resp.Body.Close()
		var hs Health
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&hs))
		return resp.StatusCode, hs
	}
	code, hs := healthz()
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.True(t, hs.Ready, "it still admits deliveries: %+v", hs)
	assert.False(t, hs.Progressing)
	assert.Equal(t, 3, hs.Queue.Pending, "the failing delivery and the two behind it")
	require.Len(t, hs.Failing, 1, "%+v", hs)
	stuck := hs.Failing[0]
	assert.Equal(t, KindIssue, stuck.Kind)
	assert.Equal(t, "issue/301", stuck.Partition)
	assert.GreaterOrEqual(t, stuck.Attempts, 3)
	assert.False(t, stuck.Since.IsZero() || stuck.Next.Before(stuck.Since), "%+v", stuck)
	id := strconv.FormatUint(stuck.ID, 10)
	require.Len(t, hs.Problems, 1)
	assert.Contains(t, hs.Problems[0], "delivery "+id+" (Issue Hook) failed ")
	assert.Contains(t, hs.Problems[0], "its errors are logged with id="+id)
	assert.Contains(t, hs.Problems[0], "the later deliveries of issue/301 wait behind it")
	assert.NotContains(t, hs.Problems[0], "nil pointer", "errors stay in the log")

	fixed.Store(true)
	waitIdle(t, h)
	code, hs = healthz()
	assert.Equal(t, http.StatusOK, code, "%+v", hs)
	assert.True(t, hs.Progressing)
	assert.Empty(t, hs.Failing)
	assert.Equal(t, int64(4), h.Stats().Handled)

	require.NoError(t, stop())
	failed := logs.records(t, "webhook: callback failed; will retry")
	require.Len(t, failed, int(h.Stats().Retried), "one record per failed attempt")
	for i, rec := range failed {
		assert.Equal(t, "WARN", rec["level"])
		assert.Equal(t, float64(stuck.ID), rec["id"])
		assert.Equal(t, string(KindIssue), rec["kind"])
		assert.Equal(t, float64(i+1), rec["attempt"], "attempts in order, each once")
		assert.NotEmpty(t, rec["key"])
		assert.Equal(t, "panic: runtime error: invalid memory address or nil pointer dereference", rec["error"])
		assert.Contains(t, rec["stack"], "TestPanickingCallbackIsLoggedAndReported", "the stack of the panic")
	}
}
