package diskqueue

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// TestBurstIsStoredNotDropped: 500 deliveries at once, a 50 ms callback and
// the disk queue: every one is answered 200 and handled.
func TestBurstIsStoredNotDropped(t *testing.T) {
	const n = 500
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	h := newHandler(t, webhook.Options{Queue: q, Workers: 16, OnIssue: func(context.Context, *webhook.IssueEvent) error {
		time.Sleep(50 * time.Millisecond)
		return nil
	}})
	running(t, h)
	srv := httptest.NewServer(h)
	defer srv.Close()

	template := readFile(t, "spec/issue.json")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}, Timeout: webhook.SenderTimeout}
	defer client.CloseIdleConnections()
	codes := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			codes[i] = post(client, srv.URL, issueBody(template, i+1))
		}()
	}
	close(start)
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: n}, count)
	waitIdle(t, h)
	st := h.Stats()
	assert.Zero(t, st.Dropped)
	assert.Equal(t, int64(n), st.Handled)
	t.Logf("%d concurrent deliveries: %v; %+v", n, count, st)
}

// TestFullDiskQueueAnswers503: a delivery the store refuses is answered 503
// and counted, and what was stored before is still handled.
func TestFullDiskQueueAnswers503(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{MaxBytes: 64 << 10})
	defer q.Close()
	h := newHandler(t, webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	template := readFile(t, "spec/issue.json")
	ok, full := 0, 0
	for id := 1; full == 0 && id < 10000; id++ {
		switch code := serve(h, issueRequest(issueBody(template, id))).Code; code {
		case http.StatusOK:
			ok++
		case http.StatusServiceUnavailable:
			full++
		default:
			t.Fatalf("answered %d", code)
		}
	}
	require.Equal(t, 1, full)
	assert.Equal(t, int64(1), h.Stats().Dropped)
	running(t, h)
	waitIdle(t, h)
	assert.Equal(t, int64(ok), h.Stats().Handled)
}
