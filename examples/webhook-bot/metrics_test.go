package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
)

// A bot whose client and handler report to the metrics, fed by the fake
// server: the scrape page shows its calls, its deliveries and its queue in
// the Prometheus text format. Run with -v to see the page.
func TestMetricsPage(t *testing.T) {
	m, err := newMetrics()
	require.NoError(t, err)
	defer m.Shutdown(context.Background())
	srv, err := collabtest.NewServer()
	require.NoError(t, err)
	defer srv.Close()
	pid := srv.Seed.Project(srv.Admin, "metrics", collab.PrivateVisibility).ID
	require.NoError(t, srv.Err())
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithObserver(m.Observer))
	require.NoError(t, err)

	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	defer q.Close()
	_, err = m.Observer.ObserveQueue(q.Stats)
	require.NoError(t, err)
	var calls atomic.Int32
	handled := make(chan struct{}, 2)
	h, err := webhook.NewHandler(webhook.Options{Queue: q, Observer: m.Observer, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			if calls.Add(1) == 1 {
				return errors.New("busy")
			}
			_, _, err := c.Notes.CreateIssueNote(ctx, pid, e.ObjectAttributes.ID, &collab.CreateNoteOptions{Body: "seen"})
			handled <- struct{}{}
			return err
		}})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- h.Run(ctx) }()
	defer func() { stop(); require.NoError(t, <-stopped) }()
	mux := http.NewServeMux()
	mux.Handle("/hook", h)
	mux.Handle("/metrics", m)
	bot := httptest.NewServer(mux)
	defer bot.Close()

	_, _, err = c.Hooks.Add(context.Background(), pid, &collab.AddHookOptions{URL: bot.URL + "/hook", IssuesEvents: collab.Ptr(true), PushEvents: collab.Ptr(false)})
	require.NoError(t, err)
	for _, title := range []string{"first", "second"} {
		_, _, err = c.Issues.Create(context.Background(), pid, &collab.CreateIssueOptions{Title: title})
		require.NoError(t, err)
	}
	for range 2 {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("a delivery was not handled")
		}
	}
	require.NoError(t, h.WaitIdle(context.Background()))

	page := scrape(t, bot.URL+"/metrics")
	assert.Contains(t, page, `http_client_request_duration_seconds_count{http_request_method="POST",http_response_status_class="2xx"`)
	assert.Contains(t, page, `url_template="/projects/:id/issues/:issue_id/notes"`)
	assert.Regexp(t, `(?m)^collab_webhook_admitted_total\{collab_webhook_kind="Issue Hook",collab_webhook_outcome="accepted",[^}]*\} 2$`, page)
	assert.Regexp(t, `(?m)^collab_webhook_handling_duration_seconds_count\{collab_webhook_kind="Issue Hook",collab_webhook_outcome="retry",[^}]*\} 1$`, page)
	assert.Regexp(t, `(?m)^collab_webhook_queue_depth\{[^}]*\} 0$`, page)
	for _, line := range strings.Split(page, "\n") {
		if (strings.HasPrefix(line, "collab_") || strings.HasPrefix(line, "http_client_request_duration_seconds_count")) && !strings.Contains(line, "_bucket{") {
			t.Log(line)
		}
	}
}

func scrape(t *testing.T, url string) string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return string(body)
}
