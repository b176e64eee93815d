package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// The scrape page shows the client's and the receiver's metrics in the
// Prometheus text format, the queue's gauges read at the scrape.
func TestMetricsPage(t *testing.T) {
	m, err := newMetrics()
	require.NoError(t, err)
	defer m.Shutdown(context.Background())
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	defer q.Close()
	require.NoError(t, q.Put(context.Background(), &webhook.Delivery{Key: "k", Kind: webhook.KindIssue, ReceivedAt: time.Now(), Body: []byte(`{}`)}))
	_, err = m.Observer.ObserveQueue(q.Stats)
	require.NoError(t, err)

	ctx := m.Observer.CallStarted(context.Background(), collab.CallInfo{Method: "GET", Route: "/projects/:id/issues", Host: "127.0.0.1:3000"})
	m.Observer.CallEnded(ctx, collab.CallEnd{Status: 200, Attempts: 1})
	m.Observer.DeliveryAdmitted(context.Background(), webhook.KindIssue, webhook.OutcomeAccepted)

	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(page), `http_client_request_duration_seconds_count{http_request_method="GET",http_response_status_class="2xx"`)
	assert.Contains(t, string(page), `url_template="/projects/:id/issues"`)
	assert.Contains(t, string(page), `collab_webhook_admitted_total{collab_webhook_kind="Issue Hook",collab_webhook_outcome="accepted"`)
	assert.Regexp(t, `(?m)^collab_webhook_queue_depth\{[^}]*\} 1$`, string(page))
}
