package collab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
	"github.com/collabsvc/collab/webhook"
)

// logSink keeps every record written through it, as JSON lines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *logSink) records(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		out = append(out, rec)
	}
	return out
}

// TestLogsCarryNoSecret runs the client, the runner client and the webhook
// handler with every kind of credential, through retries, errors and
// rejected deliveries, with every logger at debug level (the default
// logger too), and searches all that was logged for each credential.
func TestLogsCarryNoSecret(t *testing.T) {
	sink := &logSink{}
	logger := slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prev := slog.Default()
	slog.SetDefault(logger)
	t.Cleanup(func() { slog.SetDefault(prev) })

	srv, err := collabtest.NewServer()
	require.NoError(t, err)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	secrets := map[string]string{
		"private token":       srv.AdminToken,
		"OAuth token":         srv.AdminOAuthToken,
		"registration token":  srv.RunnersRegistrationToken(),
		"webhook secret":      "hook-secret-9f3c2a71",
		"wrong webhook token": "forged-token-5be1d0",
	}
	project := srv.Seed.Project(srv.Admin, "logs", collab.PrivateVisibility)
	pid := project.ID
	user := srv.AddUser("sudoed", false)
	secrets["a user's private_token"] = srv.Seed.Token(user, collabtest.PrivateToken)
	srv.Seed.Member(project, user, collab.DeveloperAccess)
	require.NoError(t, srv.Err())

	opts := []collab.ClientOption{collab.WithLogger(logger), collab.WithRetry(collab.RetryPolicy{MaxRetries: 2, MinWait: time.Millisecond, MaxWait: 5 * time.Millisecond})}
	logClientCalls(ctx, t, srv, pid, opts, secrets)
	logRunnerCalls(ctx, t, srv, project, opts, secrets, logger)
	logDeliveries(ctx, t, srv, pid, opts, secrets, logger)

	records := sink.records(t)
	all := sink.buf.String()
	for what, secret := range secrets {
		require.NotEmpty(t, secret, what)
		assert.NotContains(t, all, secret, "the %s was logged", what)
	}
	// The run did log: the retries, the rejection and the failed callback.
	msgs := map[string]int{}
	for _, rec := range records {
		msgs[rec["msg"].(string)]++
	}
	t.Logf("%d records: %v", len(records), msgs)
	assert.Positive(t, msgs["collab: retrying"])
	assert.Positive(t, msgs["webhook: delivery rejected"])
	assert.Positive(t, msgs["webhook: callback failed; will retry"])
	checkStableKeys(t, records)
}

// logClientCalls makes calls with a private token, an OAuth token, Sudo,
// and a user's private_token in the query, each retried once.
func logClientCalls(ctx context.Context, t *testing.T, srv *collabtest.Server, pid int, opts []collab.ClientOption, secrets map[string]string) {
	c, err := collab.NewClient(srv.URL, append(opts, collab.WithPrivateToken(secrets["private token"]))...)
	require.NoError(t, err)
	srv.FailNext(1, http.StatusBadGateway)
	_, _, err = c.Projects.Get(ctx, pid)
	require.NoError(t, err)
	_, _, err = c.Projects.Get(ctx, 999999)
	require.ErrorIs(t, err, collab.ErrNotFound)
	srv.FailNext(1, http.StatusBadGateway)
	_, _, err = c.Sudo("sudoed").Issues.List(ctx, pid, nil)
	require.NoError(t, err)

	o, err := collab.NewClient(srv.URL, append(opts, collab.WithOAuthToken(secrets["OAuth token"]))...)
	require.NoError(t, err)
	srv.FailNext(1, http.StatusServiceUnavailable)
	_, _, err = o.Issues.List(ctx, pid, nil)
	require.NoError(t, err)

	anon, err := collab.NewClient(srv.URL, opts...)
	require.NoError(t, err)
	req, err := anon.NewRequest(ctx, http.MethodGet, fmt.Sprintf("projects/%d?private_token=%s", pid, secrets["a user's private_token"]), nil)
	require.NoError(t, err)
	srv.FailNext(1, http.StatusBadGateway)
	_, err = anon.Do(req, nil)
	require.NoError(t, err)
}

// logRunnerCalls registers a runner, takes a build, sends its trace and
// finishes it: the registration, runner and build tokens, with the calls
// that may be retried failing once.
func logRunnerCalls(ctx context.Context, t *testing.T, srv *collabtest.Server, project *collab.Project, opts []collab.ClientOption, secrets map[string]string, logger *slog.Logger) {
	rc, err := runner.NewClient(srv.URL, opts...)
	require.NoError(t, err)
	reg, err := rc.RegisterRunner(ctx, secrets["registration token"], &runner.RegisterRunnerOptions{Description: "logs"})
	require.NoError(t, err)
	secrets["runner token"] = string(reg.Token)
	srv.Seed.Build(project, collabtest.BuildSpec{Commands: "make"})
	require.NoError(t, srv.Err())
	srv.FailNext(1, http.StatusTooManyRequests)
	b, err := rc.RequestBuild(ctx, string(reg.Token), &runner.Info{Name: "logs"})
	require.NoError(t, err)
	require.NotNil(t, b)
	secrets["build token"] = string(b.Token)
	tw := rc.NewTraceWriter(ctx, b.ID, string(b.Token), runner.TraceWriterOptions{Logger: logger, FlushInterval: 10 * time.Millisecond})
	srv.FailNext(1, http.StatusServiceUnavailable)
	_, err = tw.Write([]byte("building\n"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	srv.FailNext(1, http.StatusServiceUnavailable)
	require.NoError(t, rc.UpdateBuild(ctx, b.ID, string(reg.Token), "success", nil))
}

// logDeliveries runs a handler with a secret: one delivery is forged with
// a wrong token, one real delivery fails its first attempt.
func logDeliveries(ctx context.Context, t *testing.T, srv *collabtest.Server, pid int, opts []collab.ClientOption, secrets map[string]string, logger *slog.Logger) {
	var calls atomic.Int32
	done := make(chan struct{})
	h, err := webhook.NewHandler(webhook.Options{
		Secret: secrets["webhook secret"], Logger: logger, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		OnIssue: func(context.Context, *webhook.IssueEvent) error {
			if calls.Add(1) == 1 {
				return fmt.Errorf("the tracker was busy")
			}
			close(done)
			return nil
		},
	})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() { stopped <- h.Run(runCtx) }()
	receiver := httptest.NewServer(h)
	defer receiver.Close()

	forged, err := http.NewRequestWithContext(ctx, http.MethodPost, receiver.URL, strings.NewReader(`{"object_kind":"issue"}`))
	require.NoError(t, err)
	forged.Header.Set("Content-Type", "application/json")
	forged.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	forged.Header.Set(webhook.HeaderToken, secrets["wrong webhook token"])
	resp, err := http.DefaultClient.Do(forged)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	c, err := collab.NewClient(srv.URL, append(opts, collab.WithPrivateToken(secrets["private token"]))...)
	require.NoError(t, err)
	hook, _, err := c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: receiver.URL, IssuesEvents: collab.Ptr(true), PushEvents: collab.Ptr(false)})
	require.NoError(t, err)
	require.NoError(t, srv.SetHookToken(hook.ID, secrets["webhook secret"]))
	_, _, err = c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "logged"})
	require.NoError(t, err)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the delivery was never handled")
	}
	stop()
	require.NoError(t, <-stopped)
}

// checkStableKeys holds the records to their stable keys: a client record
// names its route and attempt; a handler record about a delivery names its
// kind, and once the delivery is stored its key and attempt.
func checkStableKeys(t *testing.T, records []map[string]any) {
	for _, rec := range records {
		msg := rec["msg"].(string)
		switch {
		case strings.HasPrefix(msg, "collab: "):
			for _, k := range []string{"method", "route", "attempt"} {
				assert.Contains(t, rec, k, msg)
			}
		case msg == "webhook: delivery rejected":
			assert.Contains(t, rec, "kind", msg)
		case strings.HasPrefix(msg, "webhook: callback"):
			for _, k := range []string{"kind", "key", "attempt"} {
				assert.Contains(t, rec, k, msg)
			}
		}
	}
}
