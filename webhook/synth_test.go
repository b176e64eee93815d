package webhook_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyntheticAdmit: a synthesized event is stored as a delivery marked
// Synthesized with its record, keyed by its state, so that the delivery of
// the same state and a second synthesis of it are duplicates; a kind
// without a callback is ignored, and a body that does not decode is an
// error that stores nothing.
func TestSyntheticAdmit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := os.ReadFile("testdata/spec/issue.json")
	require.NoError(t, err)
	got := make(chan *webhook.Delivery, 4)
	h, err := webhook.NewHandler(webhook.Options{OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error {
		got <- webhook.DeliveryFrom(ctx)
		return nil
	}})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	syn := h.Synthetic()

	outcome, err := syn.Admit(ctx, webhook.KindIssue, body, []byte(`{"id":301}`))
	require.NoError(t, err)
	assert.Equal(t, webhook.OutcomeAccepted, outcome)
	d := <-got
	assert.True(t, d.Synthesized)
	assert.JSONEq(t, `{"id":301}`, string(d.Record))
	assert.Equal(t, d.StateKey, d.Key, "keyed by the state alone")
	assert.True(t, strings.HasPrefix(d.Key, "issue/"), d.Key)

	outcome, err = syn.Admit(ctx, webhook.KindIssue, body, nil)
	require.NoError(t, err)
	assert.Equal(t, webhook.OutcomeDuplicate, outcome, "the same state again")

	// A later state that the server delivered: synthesizing it, from a body
	// of another action, finds the delivery.
	later := strings.Replace(string(body), "2016-06-21 09:14:07 UTC", "2016-06-21 09:20:00 UTC", 1)
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(later))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, (<-got).Synthesized)
	outcome, err = syn.Admit(ctx, webhook.KindIssue, []byte(strings.Replace(later, `"action":"open"`, `"action":"update"`, 1)), nil)
	require.NoError(t, err)
	assert.Equal(t, webhook.OutcomeDuplicate, outcome, "the receiver has that state")

	outcome, err = syn.Admit(ctx, webhook.KindPush, []byte(`{"object_kind":"push","ref":"refs/heads/x","before":"a","after":"b"}`), nil)
	require.NoError(t, err)
	assert.Equal(t, webhook.OutcomeIgnored, outcome, "no OnPush")

	_, err = syn.Admit(ctx, webhook.KindIssue, []byte(`[1]`), nil)
	assert.ErrorContains(t, err, "does not decode")

	require.NoError(t, h.WaitIdle(ctx))
	st := h.Stats()
	assert.Equal(t, int64(2), st.Accepted)
	assert.Equal(t, int64(2), st.Duplicates)
	assert.Equal(t, int64(1), st.Ignored)
	assert.Empty(t, got, "two handlings in all")
}

// TestSyntheticCheckpointsAndReport: checkpoints go to the handler's queue,
// even one the handler made itself; a report reaches the logger.
func TestSyntheticCheckpointsAndReport(t *testing.T) {
	ctx := context.Background()
	var logs strings.Builder
	h, err := webhook.NewHandler(webhook.Options{
		OnDelivery: func(context.Context, *webhook.Delivery) error { return nil },
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
	})
	require.NoError(t, err)
	syn := h.Synthetic()
	v, err := syn.Checkpoint(ctx, "catchup/7")
	require.NoError(t, err)
	assert.Nil(t, v)
	require.NoError(t, syn.SetCheckpoint(ctx, "catchup/7", []byte(`{"at":"x"}`)))
	v, err = syn.Checkpoint(ctx, "catchup/7")
	require.NoError(t, err)
	assert.Equal(t, `{"at":"x"}`, string(v))

	syn.Report(ctx, webhook.CatchUpReport{Project: "acme/shop", Changes: 3, Lag: time.Minute})
	syn.Report(ctx, webhook.CatchUpReport{Project: "7", Err: errors.New("boom")})
	assert.Contains(t, logs.String(), "level=INFO msg=\"webhook: catch-up run ended\" project=acme/shop changes=3 lag=1m0s")
	assert.Contains(t, logs.String(), "level=WARN msg=\"webhook: catch-up run ended\" project=7 changes=0 lag=0s error=boom")
}
