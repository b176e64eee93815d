package diskqueue

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/collabsvc/collab/webhook"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(receiverChild())
	}
	if os.Getenv(fullDiskEnv) != "" {
		os.Exit(fullDiskChild())
	}
	goleak.VerifyTestMain(m)
}

func openDisk(t *testing.T, dir string, o Options) *Queue {
	t.Helper()
	q, err := Open(dir, o)
	require.NoError(t, err)
	return q
}

// readFile reads a file of the webhook package's testdata.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	require.NoError(t, err)
	return b
}

// issueRequest builds an issue delivery as the server sends it.
func issueRequest(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	return r
}

// askedAgain is the Code serve reports for a delivery closed without an
// answer.
const askedAgain = -1

func serve(h http.Handler, r *http.Request) (w *httptest.ResponseRecorder) {
	w = httptest.NewRecorder()
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				panic(p)
			}
			w.Code = askedAgain
		}
	}()
	h.ServeHTTP(w, r)
	return w
}

func newHandler(t *testing.T, o webhook.Options) *webhook.Handler {
	h, err := webhook.NewHandler(o)
	require.NoError(t, err)
	return h
}

// running starts h's workers and stops them when the test ends.
func running(t *testing.T, h *webhook.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { cancel(); <-done }) })
}

func waitIdle(t *testing.T, h *webhook.Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, h.WaitIdle(ctx))
}

// logEnd returns where the log ends: its head, and the bytes written to it.
func logEnd(q *Queue) (num uint64, size int64) {
	q.mu.Lock()
	head := q.head()
	q.mu.Unlock()
	return head.num, q.written(head)
}
