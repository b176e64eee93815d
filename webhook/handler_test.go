package webhook

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// delivery builds a request as the server sends it.
func delivery(t *testing.T, kind Kind, file, token string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(readFile(t, file)))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(HeaderEvent, string(kind))
	if token != "" {
		r.Header.Set(HeaderToken, token)
	}
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// fakeTimers replaces a handler's timers: each new timer is announced on
// started, and fires when the test sends on its channel.
type fakeTimers struct{ started chan chan time.Time }

func useFakeTimers(h *Handler) *fakeTimers {
	f := &fakeTimers{started: make(chan chan time.Time, 10)}
	h.timer = func(time.Duration) (<-chan time.Time, func() bool) {
		c := make(chan time.Time, 1)
		f.started <- c
		return c, func() bool { return true }
	}
	return f
}

// running starts h's workers and stops them when the test ends.
func running(t *testing.T, h *Handler) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func newHandler(t *testing.T, o Options) *Handler {
	h, err := NewHandler(o)
	require.NoError(t, err)
	return h
}

func TestHandlerRejects(t *testing.T) {
	var logs bytes.Buffer
	const secret = "hook-secret-4f2a"
	calls := 0
	h := newHandler(t, Options{Secret: secret, MaxBodySize: 4096, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnIssue: func(context.Context, *IssueEvent) error { calls++; return nil }})

	wrong := delivery(t, KindIssue, "spec/issue.json", "not-the-secret-77")
	assert.Equal(t, http.StatusUnauthorized, serve(h, wrong).Code, "wrong token")
	assert.Equal(t, http.StatusUnauthorized, serve(h, delivery(t, KindIssue, "spec/issue.json", "")).Code, "no token")
	twice := delivery(t, KindIssue, "spec/issue.json", secret)
	twice.Header.Add(HeaderToken, secret)
	assert.Equal(t, http.StatusUnauthorized, serve(h, twice).Code, "two tokens")

	get := delivery(t, KindIssue, "spec/issue.json", secret)
	get.Method = http.MethodGet
	w := serve(h, get)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code, "wrong method")
	assert.Equal(t, "POST", w.Header().Get("Allow"))

	form := delivery(t, KindIssue, "spec/issue.json", secret)
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	assert.Equal(t, http.StatusUnsupportedMediaType, serve(h, form).Code, "wrong content type")

	big := delivery(t, KindIssue, "spec/issue.json", secret)
	big.Body = readCloser(strings.Repeat(" ", 4096) + `{}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, serve(h, big).Code, "oversized body")

	bad := delivery(t, KindIssue, "spec/issue.json", secret)
	bad.Body = readCloser(`{"object_kind":`)
	assert.Equal(t, http.StatusBadRequest, serve(h, bad).Code, "not JSON")

	assert.Zero(t, calls)
	assert.Equal(t, Stats{Received: 7, Rejected: 7}, h.Stats())
	assert.Contains(t, logs.String(), "wrong or missing token")
	assert.NotContains(t, logs.String(), secret, "the configured token is never logged")
	assert.NotContains(t, logs.String(), "not-the-secret-77", "nor the one received")
}

func readCloser(s string) *readCloserString { return &readCloserString{strings.NewReader(s)} }

type readCloserString struct{ *strings.Reader }

func (readCloserString) Close() error { return nil }

func TestHandlerAccepts(t *testing.T) {
	const secret = "s3cret"
	got := make(chan *IssueEvent, 1)
	h := newHandler(t, Options{Secret: secret, OnIssue: func(_ context.Context, e *IssueEvent) error { got <- e; return nil }})
	running(t, h)
	r := delivery(t, KindIssue, "spec/issue.json", secret)
	r.Header.Set("Content-Type", "application/json; charset=utf-8")
	assert.Equal(t, http.StatusOK, serve(h, r).Code)
	assert.Equal(t, 58, (<-got).ObjectAttributes.IID)

	// A kind with no callback, and an unknown kind, are answered 200 and ignored.
	assert.Equal(t, http.StatusOK, serve(h, delivery(t, KindPush, "spec/push.json", secret)).Code)
	assert.Equal(t, http.StatusOK, serve(h, delivery(t, "System Hook", "spec/push.json", secret)).Code)
	assert.Equal(t, int64(2), h.Stats().Ignored)
}

func TestHandlerUnknownKindToOnRaw(t *testing.T) {
	got := make(chan *RawEvent, 1)
	h := newHandler(t, Options{OnRaw: func(_ context.Context, e *RawEvent) error { got <- e; return nil }})
	running(t, h)
	r := delivery(t, "Pipeline Hook", "payloads/gitlabce-pipeline-1.json", "")
	assert.Equal(t, http.StatusOK, serve(h, r).Code)
	raw := <-got
	assert.Equal(t, Kind("Pipeline Hook"), raw.Kind())
	assert.Equal(t, readFile(t, "payloads/gitlabce-pipeline-1.json"), raw.Body)
}

func TestHandlerPartlyDecodedEventIsHandedOn(t *testing.T) {
	var logs bytes.Buffer
	got := make(chan *NoteEvent, 1)
	h := newHandler(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnNote: func(_ context.Context, e *NoteEvent) error { got <- e; return nil }})
	running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, delivery(t, KindNote, "payloads/gitlabce-note_merge_request-1.json", "")).Code)
	assert.Equal(t, "This MR needs work.", (<-got).ObjectAttributes.Note)
	assert.Contains(t, logs.String(), "merge_request.last_commit.timestamp")
}

func TestHandlerDuplicateSuppressed(t *testing.T) {
	var mu sync.Mutex
	seen := map[int]int{}
	done := make(chan struct{}, 10)
	h := newHandler(t, Options{DedupWindow: time.Hour, OnIssue: func(_ context.Context, e *IssueEvent) error {
		mu.Lock()
		seen[e.ObjectAttributes.ID]++
		mu.Unlock()
		done <- struct{}{}
		return nil
	}})
	running(t, h)
	for range 3 {
		assert.Equal(t, http.StatusOK, serve(h, delivery(t, KindIssue, "spec/issue.json", "")).Code)
	}
	// The same issue, another action: not a duplicate.
	other := delivery(t, KindIssue, "spec/issue.json", "")
	other.Body = readCloser(strings.Replace(string(readFile(t, "spec/issue.json")), `"action":"open"`, `"action":"close"`, 1))
	assert.Equal(t, http.StatusOK, serve(h, other).Code)
	<-done
	<-done
	st := h.Stats()
	assert.Equal(t, int64(2), st.Duplicates)
	mu.Lock()
	assert.Equal(t, map[int]int{4417: 2}, seen)
	mu.Unlock()
}

func TestDedupKeys(t *testing.T) {
	keys := map[string]string{}
	for _, f := range []string{"push", "tag_push", "issue", "merge_request", "note_snippet", "build", "wiki_page"} {
		body := readFile(t, "spec/"+f+".json")
		ev, err := ParsePayload(http.Header{}, body)
		require.NoError(t, err)
		k := DedupKey(ev, body)
		assert.NotContains(t, keys, k, "%s shares a key with %s", f, keys[k])
		keys[k] = f
	}
	assert.Contains(t, keys, "push/31/refs/heads/master/4c1e0d52b7a9f3e8d6c2a1b0e9f8d7c6b5a49382/a93f7e2c1d0b9a8f7e6d5c4b3a29180f7e6d5c4b")
	assert.Contains(t, keys, "issue/4417/open/2016-06-21T09:14:07Z")
	assert.Contains(t, keys, "merge_request/902/open/2016-06-21T10:02:55Z")
	assert.Contains(t, keys, "note/7731")
	assert.Contains(t, keys, "build/15520/success")
	assert.Equal(t, "body/", keyPrefixOf(keys, "wiki_page"))
}

func keyPrefixOf(keys map[string]string, file string) string {
	for k, f := range keys {
		if f == file {
			return k[:5]
		}
	}
	return ""
}

func TestMemoryStoreWindow(t *testing.T) {
	s := NewMemoryStore()
	now := time.Date(2016, 6, 21, 9, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	ctx := context.Background()
	seen, _ := s.Seen(ctx, "a", time.Minute)
	assert.False(t, seen)
	seen, _ = s.Seen(ctx, "a", time.Minute)
	assert.True(t, seen)
	now = now.Add(time.Minute)
	seen, _ = s.Seen(ctx, "a", time.Minute)
	assert.False(t, seen, "expired after the window")
	now = now.Add(2 * time.Minute)
	_, _ = s.Seen(ctx, "b", time.Minute)
	assert.Equal(t, 1, s.Len(), "expired keys are swept")
}

type failingStore struct{}

func (failingStore) Seen(context.Context, string, time.Duration) (bool, error) {
	return false, errors.New("store down")
}

func TestDedupStoreFailureHandsOn(t *testing.T) {
	got := make(chan struct{}, 2)
	h := newHandler(t, Options{DedupWindow: time.Minute, DedupStore: failingStore{},
		OnIssue: func(context.Context, *IssueEvent) error { got <- struct{}{}; return nil }})
	running(t, h)
	serve(h, delivery(t, KindIssue, "spec/issue.json", ""))
	serve(h, delivery(t, KindIssue, "spec/issue.json", ""))
	<-got
	<-got
	assert.Zero(t, h.Stats().Duplicates)
}

// blockingIssues returns a callback that announces each event on started and
// returns when release is closed or its context ends.
func blockingIssues(started chan<- int, release <-chan struct{}) func(context.Context, *IssueEvent) error {
	return func(ctx context.Context, e *IssueEvent) error {
		started <- e.ObjectAttributes.ID
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func issueDelivery(t *testing.T, id int) *http.Request {
	r := delivery(t, KindIssue, "spec/issue.json", "")
	r.Body = readCloser(strings.Replace(string(readFile(t, "spec/issue.json")), `"id":4417`, `"id":`+itoa(id), 1))
	return r
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestSlowCallbackDoesNotHoldSender(t *testing.T) {
	started, release := make(chan int, 1), make(chan struct{})
	h := newHandler(t, Options{Workers: 1, OnIssue: blockingIssues(started, release)})
	running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	assert.Equal(t, 1, <-started)
	// The callback is now blocked until release is closed, and the next
	// delivery is still answered at once.
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 2)).Code)
	assert.Equal(t, int64(2), h.Stats().Queued)
	close(release)
	assert.Equal(t, 2, <-started)
}

func TestFullQueueAnswers503AfterWait(t *testing.T) {
	var logs bytes.Buffer
	started, release := make(chan int, 3), make(chan struct{})
	h := newHandler(t, Options{Workers: 1, QueueSize: 1, QueueWait: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnIssue: blockingIssues(started, release)})
	timers := useFakeTimers(h)
	running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	<-started // the worker is busy with 1
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 2)).Code)

	// The queue is full: the next delivery waits for room.
	answered := make(chan int)
	go func() { answered <- serve(h, issueDelivery(t, 3)).Code }()
	expire := <-timers.started
	select {
	case code := <-answered:
		t.Fatalf("answered %d before its wait ended", code)
	default:
	}
	expire <- time.Time{}
	assert.Equal(t, http.StatusServiceUnavailable, <-answered)
	assert.Contains(t, logs.String(), "will not deliver it again")

	// Room that appears during the wait lets the delivery in.
	go func() { answered <- serve(h, issueDelivery(t, 4)).Code }()
	<-timers.started
	close(release) // 1 ends, 2 is taken, 4 gets the room
	assert.Equal(t, http.StatusOK, <-answered)
	assert.Equal(t, 2, <-started)
	assert.Equal(t, 4, <-started)

	st := h.Stats()
	assert.Equal(t, int64(1), st.Dropped)
	assert.Equal(t, int64(4), st.Received)
}

// stopWithThreeQueued runs h (one worker, whose callback reports on
// started and blocks), delivers three issue events, and once the first is
// being handled starts stopping h; the channel gets what the stop returns.
func stopWithThreeQueued(t *testing.T, h *Handler, started <-chan int) <-chan error {
	t.Helper()
	stop := running(t, h)
	for id := range 3 {
		assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, id+1)).Code)
	}
	<-started
	stopped := make(chan error)
	go func() { stopped <- stop() }()
	return stopped
}

func TestStopDrainsQueue(t *testing.T) {
	started, release := make(chan int, 5), make(chan struct{})
	h := newHandler(t, Options{Workers: 1, OnIssue: blockingIssues(started, release)})
	stopped := stopWithThreeQueued(t, h, started)
	close(release)
	require.NoError(t, <-stopped)
	assert.Equal(t, Stats{Received: 3, Handled: 3}, h.Stats())
	assert.Equal(t, http.StatusServiceUnavailable, serve(h, issueDelivery(t, 9)).Code, "a stopped handler answers 503")
	goleak.VerifyNone(t)
}

func TestStopCancelsAfterDrainTimeout(t *testing.T) {
	started := make(chan int, 5)
	h := newHandler(t, Options{Workers: 1, OnIssue: blockingIssues(started, nil)})
	timers := useFakeTimers(h)
	stopped := stopWithThreeQueued(t, h, started)
	drain := <-timers.started
	drain <- time.Time{} // the drain time is up: cancel the callback, drop the rest
	err := <-stopped
	assert.ErrorContains(t, err, "2 queued event(s) dropped")
	assert.Equal(t, Stats{Received: 3, Failed: 1, Dropped: 2}, h.Stats())
	goleak.VerifyNone(t)
}

func TestCallbackErrorsAndPanics(t *testing.T) {
	done := make(chan struct{}, 2)
	h := newHandler(t, Options{
		OnIssue: func(context.Context, *IssueEvent) error {
			defer func() { done <- struct{}{} }()
			return errors.New("boom")
		},
		OnPush: func(context.Context, *PushEvent) error { defer func() { done <- struct{}{} }(); panic("bad") },
	})
	stop := running(t, h)
	serve(h, delivery(t, KindIssue, "spec/issue.json", ""))
	serve(h, delivery(t, KindPush, "spec/push.json", ""))
	<-done
	<-done
	require.NoError(t, stop())
	assert.Equal(t, Stats{Received: 2, Failed: 2}, h.Stats())
}

func TestNewHandlerOptions(t *testing.T) {
	_, err := NewHandler(Options{QueueWait: SenderTimeout})
	assert.ErrorContains(t, err, "below the sender's")
	_, err = NewHandler(Options{Workers: -1})
	assert.Error(t, err)
	h := newHandler(t, Options{})
	stop := running(t, h)
	require.NoError(t, stop())
	assert.Error(t, h.Run(context.Background()), "Run twice")
}

func TestSenderGoneWhileWaiting(t *testing.T) {
	var logs bytes.Buffer
	started, release := make(chan int, 2), make(chan struct{})
	defer close(release)
	h := newHandler(t, Options{Workers: 1, QueueSize: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnIssue: blockingIssues(started, release)})
	timers := useFakeTimers(h)
	running(t, h)
	serve(h, issueDelivery(t, 1))
	<-started
	serve(h, issueDelivery(t, 2))
	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan int)
	go func() { answered <- serve(h, issueDelivery(t, 3).WithContext(ctx)).Code }()
	<-timers.started
	cancel()
	assert.Equal(t, http.StatusServiceUnavailable, <-answered)
	assert.Equal(t, int64(1), h.Stats().Dropped)
	assert.Contains(t, logs.String(), "may deliver it again")
}
