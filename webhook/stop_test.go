package webhook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stallQueue is a MemoryQueue whose Puts wait until release is closed or
// their context ends, like an engine that stalls.
type stallQueue struct {
	*MemoryQueue
	entered chan struct{}
	release chan struct{}
}

func newStallQueue() *stallQueue {
	return &stallQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), entered: make(chan struct{}, 100), release: make(chan struct{})}
}

func (q *stallQueue) Put(ctx context.Context, d *Delivery) error {
	q.entered <- struct{}{}
	select {
	case <-q.release:
		return q.MemoryQueue.Put(ctx, d)
	case <-ctx.Done():
		return fmt.Errorf("stalled: %w", ctx.Err())
	}
}

// rawPost sends one issue delivery on a new connection and reads until the
// server closes it. It returns what came back and the read's error: nil for
// an orderly close, a reset otherwise.
func rawPost(t *testing.T, addr string, body []byte) ([]byte, error) {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Gitlab-Event: Issue Hook\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	return io.ReadAll(bufio.NewReader(c))
}

// TestAskAgainIsAnOrderlyClose: a delivery that cannot be stored is closed
// after its body was read, without an answer and without a reset, which the
// sender takes as a read failure and delivers again. A Go client sees EOF.
func TestAskAgainIsAnOrderlyClose(t *testing.T) {
	q := &flakyQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), fail: 1000}
	defer q.Close()
	h := newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := readFile(t, "spec/issue.json")

	got, err := rawPost(t, srv.Listener.Addr().String(), body)
	require.NoError(t, err, "an orderly close (FIN), not a reset")
	assert.Empty(t, got, "no answer at all")

	resp, err := srv.Client().Post(srv.URL+"/hook", "application/json", bytes.NewReader(body))
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	assert.ErrorIs(t, err, io.EOF, "the server closed the connection without a response")
	assert.Equal(t, int64(2), h.Stats().AskedAgain)
}

// TestStoreTimeoutAsksAgain: a store that stalls is given up after
// StoreTimeout, counted and logged, and the delivery is asked for again.
func TestStoreTimeoutAsksAgain(t *testing.T) {
	var logs bytes.Buffer
	q := newStallQueue()
	defer q.Close()
	h := newHandler(t, Options{Queue: q, StoreTimeout: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	assert.Equal(t, askedAgain, serve(h, issueDelivery(t, 1)).Code)
	assert.Equal(t, Stats{Received: 1, AskedAgain: 1, StoreTimeouts: 1}, h.Stats())
	assert.Contains(t, logs.String(), "context deadline exceeded")
	assert.Contains(t, logs.String(), "key=issue/1/")
}

// TestShutdownOrder: Shutdown stops admitting (a new delivery is asked for
// again), waits for the store in flight (answered 200), and stops Run.
func TestShutdownOrder(t *testing.T) {
	q := newStallQueue()
	defer q.Close()
	h := newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	ran := make(chan error, 1)
	go func() { ran <- h.Run(context.Background()) }()

	first := make(chan int, 1)
	go func() { first <- serve(h, issueDelivery(t, 1)).Code }()
	<-q.entered
	stopped := make(chan error, 1)
	go func() { stopped <- h.Shutdown(context.Background()) }()
	require.Eventually(t, h.stopping, 10*time.Second, time.Millisecond)
	assert.Equal(t, askedAgain, serve(h, issueDelivery(t, 2)).Code, "a delivery arriving during the stop")
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned (%v) before the store in flight", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(q.release)
	assert.Equal(t, http.StatusOK, <-first, "the store in flight finished and was answered")
	require.NoError(t, <-stopped)
	require.NoError(t, <-ran)
	assert.Equal(t, 1, q.Len()+int(h.Stats().Handled), "stored: handled or still queued")
	assert.Equal(t, int64(1), h.Stats().AskedAgain)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, h.Shutdown(ctx), "twice")
}

// TestShutdownBeforeRun: a Run that starts after Shutdown returns at once.
func TestShutdownBeforeRun(t *testing.T) {
	h := newHandler(t, Options{OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	require.NoError(t, h.Shutdown(context.Background()))
	require.NoError(t, h.Run(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	q := newStallQueue()
	defer q.Close()
	h = newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	go serve(h, issueDelivery(t, 1))
	<-q.entered
	assert.ErrorIs(t, h.Shutdown(ctx), context.Canceled, "a store in flight outlasts ctx")
	close(q.release)
}

// recorder is an Observer that records what it is told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

type obsKey struct{}

func (o *recorder) add(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, s)
}

func (o *recorder) DeliveryReceived(ctx context.Context, r *http.Request) context.Context {
	o.add("received")
	return context.WithValue(ctx, obsKey{}, "admission")
}

func (o *recorder) DeliveryAdmitted(ctx context.Context, kind Kind, outcome Outcome) {
	o.add(fmt.Sprintf("admitted %s %s %v", kind, outcome, ctx.Value(obsKey{})))
}

func (o *recorder) Inject(ctx context.Context, h http.Header) {
	h.Set("Traceparent", "00-trace-span-01")
}

func (o *recorder) HandlingStarted(ctx context.Context, d *Delivery) context.Context {
	o.add(fmt.Sprintf("started %d traceparent=%s", d.Attempt, d.Header.Get("Traceparent")))
	return context.WithValue(ctx, obsKey{}, "handling")
}

func (o *recorder) HandlingEnded(ctx context.Context, d *Delivery, outcome HandleOutcome, took time.Duration, err error) {
	o.add(fmt.Sprintf("ended %d %s %v %v", d.Attempt, outcome, ctx.Value(obsKey{}), err))
}

func (o *recorder) CatchUpEnded(context.Context, CatchUpReport) {}

func TestObserverSeesEveryStep(t *testing.T) {
	o := &recorder{}
	var seen []any
	h := newHandler(t, Options{Observer: o, RetryMin: time.Millisecond, OnIssue: func(ctx context.Context, _ *IssueEvent) error {
		seen = append(seen, ctx.Value(obsKey{}))
		if DeliveryFrom(ctx).Attempt == 1 {
			return errors.New("flaky")
		}
		return nil
	}})
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(t, KindPush, "spec/push.json", "")).Code)
	bad := issueDelivery(t, 2)
	bad.Method = http.MethodGet
	assert.Equal(t, http.StatusMethodNotAllowed, serve(h, bad).Code)
	running(t, h)
	waitIdle(t, h)
	require.NoError(t, h.Shutdown(context.Background()))
	assert.Equal(t, askedAgain, serve(h, issueDelivery(t, 3)).Code)
	assert.Equal(t, []any{"handling", "handling"}, seen, "the callback's context is HandlingStarted's")
	assert.Equal(t, []string{
		"received", "admitted Issue Hook accepted admission",
		"received", "admitted Issue Hook duplicate admission",
		"received", "admitted Push Hook ignored admission",
		"received", "admitted Issue Hook rejected admission",
		"started 1 traceparent=00-trace-span-01", "ended 1 retry handling flaky",
		"started 2 traceparent=00-trace-span-01", "ended 2 done handling <nil>",
		"received", "admitted Issue Hook asked_again admission",
	}, o.events)
}

// TestLateRedeliveryIsSuperseded: a delivery of an older state of an issue,
// handled after a newer one, is marked Superseded.
func TestLateRedeliveryIsSuperseded(t *testing.T) {
	got := map[string]bool{}
	var mu sync.Mutex
	h := newHandler(t, Options{Workers: 1, OnDelivery: func(ctx context.Context, d *Delivery) error {
		mu.Lock()
		defer mu.Unlock()
		got[d.StateKey] = DeliveryFrom(ctx).Superseded
		return nil
	}})
	running(t, h)
	for _, at := range []string{"2016-06-21 09:14:07 UTC", "2016-06-21 09:20:00 UTC", "2016-06-21 09:15:00 UTC"} {
		assert.Equal(t, http.StatusOK, serve(h, issueAt(t, 1, at)).Code)
		waitIdle(t, h)
	}
	assert.Equal(t, map[string]bool{
		"issue/1/2016-06-21T09:14:07Z": false,
		"issue/1/2016-06-21T09:20:00Z": false,
		"issue/1/2016-06-21T09:15:00Z": true, // sent again after the 09:20 state was handled
	}, got)
}

func TestStateOf(t *testing.T) {
	obj, at, ok := stateOf(&Delivery{Kind: KindMergeRequest, StateKey: "merge_request/7/2016-06-21T09:14:07Z"})
	assert.True(t, ok)
	assert.Equal(t, "merge_request/7", obj)
	assert.Equal(t, "2016-06-21T09:14:07Z", at)
	for _, d := range []*Delivery{{Kind: KindPush, StateKey: "x/1/2016-06-21T09:14:07Z"}, {Kind: KindIssue}, {Kind: KindIssue, StateKey: "issue/1/notatime"}} {
		_, _, ok := stateOf(d)
		assert.False(t, ok, "%+v", d)
	}
}

// TestRejectsDoNotLogBodies: no log line carries a body.
func TestLogsCarryNoBody(t *testing.T) {
	var logs bytes.Buffer
	h := newHandler(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Queue: &flakyQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), fail: 1},
		OnIssue: func(context.Context, *IssueEvent) error { return errors.New("callback failed") }, MaxAttempts: 1})
	serve(h, issueDelivery(t, 1))
	serve(h, issueDelivery(t, 1))
	running(t, h)
	waitIdle(t, h)
	assert.NotContains(t, logs.String(), "ETA off", "no body")
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		assert.Contains(t, line, "kind=", line)
	}
}
