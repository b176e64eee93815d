package otelcollab_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// These tests run a real client and a real Handler against the fake server,
// with its failure injection, and read what the SDK's in-memory exporters
// received.

// fixture is a fake server with a project, and a client that reports to a
// recorder and retries fast.
type fixture struct {
	rec *recorder
	srv *collabtest.Server
	c   *collab.Client
	p   *collab.Project
	pid int // p.ID
}

func newFixture(t *testing.T) *fixture {
	srv, err := collabtest.NewServer()
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	f := &fixture{rec: newRecorder(t), srv: srv}
	f.p = srv.Seed.Project(srv.Admin, "observed", collab.PrivateVisibility)
	f.pid = f.p.ID
	require.NoError(t, srv.Err())
	f.c, err = collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithObserver(f.rec.obs),
		collab.WithRetry(collab.RetryPolicy{MaxRetries: 3, MinWait: time.Millisecond, MaxWait: 5 * time.Millisecond}))
	require.NoError(t, err)
	return f
}

func TestCallRetriedTwice(t *testing.T) {
	f := newFixture(t)
	f.srv.FailNext(2, 503)
	_, _, err := f.c.Projects.Get(context.Background(), f.pid)
	require.NoError(t, err)

	spans := f.rec.ended("GET /projects/:id")
	require.Len(t, spans, 1)
	s := spans[0]
	a := attrs(s.Attributes)
	assert.Equal(t, "GET", a["http.request.method"])
	assert.Equal(t, "/projects/:id", a["url.template"])
	assert.Equal(t, "127.0.0.1", a["server.address"])
	assert.Equal(t, int64(200), a["http.response.status_code"])
	assert.Equal(t, int64(3), a["collab.attempts"])
	var retries []map[string]any
	for _, ev := range s.Events {
		if ev.Name == "retry" {
			retries = append(retries, attrs(ev.Attributes))
		}
	}
	require.Len(t, retries, 2)
	for i, r := range retries {
		assert.Equal(t, int64(503), r["http.response.status_code"])
		assert.Equal(t, int64(i+2), r["collab.attempt"])
	}
	assert.Equal(t, codes.Unset, s.Status.Code)
	noSecrets(t, f, spans)

	m := f.rec.metrics(t)
	route := map[string]any{"http.request.method": "GET", "url.template": "/projects/:id"}
	assert.Equal(t, int64(2), sum[int64](t, m["collab.client.retries"], route))
	n, _ := histogramCount[float64](t, m["http.client.request.duration"], merge(route, map[string]any{"http.response.status_class": "2xx"}))
	assert.Equal(t, uint64(1), n)
}

func TestCall404(t *testing.T) {
	f := newFixture(t)
	_, _, err := f.c.Issues.Get(context.Background(), f.pid, 424242)
	require.ErrorIs(t, err, collab.ErrNotFound)

	spans := f.rec.ended("GET /projects/:id/issues/:issue_id")
	require.Len(t, spans, 1)
	s := spans[0]
	assert.Equal(t, codes.Error, s.Status.Code)
	a := attrs(s.Attributes)
	assert.Equal(t, int64(404), a["http.response.status_code"])
	assert.Equal(t, "404", a["error.type"])
	assert.Equal(t, int64(1), a["collab.attempts"])
	assert.Empty(t, s.Events, "a 404 is not retried")
	noSecrets(t, f, spans)
	n, _ := histogramCount[float64](t, f.rec.metrics(t)["http.client.request.duration"],
		map[string]any{"url.template": "/projects/:id/issues/:issue_id", "http.response.status_class": "4xx", "error.type": "404"})
	assert.Equal(t, uint64(1), n)
}

func TestPaginatedWalkWithPrefetch(t *testing.T) {
	f := newFixture(t)
	for i := range 45 {
		f.srv.Seed.Issue(f.p, f.srv.Admin, "walk "+strings.Repeat("x", i%3))
	}
	require.NoError(t, f.srv.Err())
	tracer := f.rec.tp.Tracer("test")
	ctx, walk := tracer.Start(context.Background(), "walk")
	n := 0
	for _, err := range f.c.Issues.All(ctx, f.pid, &collab.ListIssuesOptions{ListOptions: collab.ListOptions{PerPage: 10}}, collab.Prefetch(3)) {
		require.NoError(t, err)
		n++
	}
	walk.End()
	require.Equal(t, 45, n)

	pages := f.rec.ended("GET /projects/:id/issues")
	require.GreaterOrEqual(t, len(pages), 5, "one span per page")
	for _, p := range pages {
		assert.Equal(t, walk.SpanContext().SpanID(), p.Parent.SpanID(), "each page is a child of the walk")
		assert.Equal(t, int64(200), attrs(p.Attributes)["http.response.status_code"])
	}
	noSecrets(t, f, pages)
	count, _ := histogramCount[float64](t, f.rec.metrics(t)["http.client.request.duration"], map[string]any{"url.template": "/projects/:id/issues"})
	assert.Equal(t, uint64(len(pages)), count)
}

// noSecrets fails if a span names the token or a query.
func noSecrets(t *testing.T, f *fixture, spans tracetest.SpanStubs) {
	t.Helper()
	for _, s := range spans {
		for _, kv := range s.Attributes {
			v := kv.Value.String()
			assert.NotContains(t, v, f.srv.AdminToken)
			assert.NotContains(t, v, "?", "%s = %s", kv.Key, v)
		}
	}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func waitFor(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
}

// eventually waits for n spans of that name to have ended: a handling's
// span ends just after its callback returns.
func eventually(t *testing.T, r *recorder, name string, n int) tracetest.SpanStubs {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := r.ended(name)
		if len(got) >= n || time.Now().After(deadline) {
			require.Len(t, got, n, name)
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}
