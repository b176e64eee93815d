package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

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
	line := logs.String()
	for _, key := range []string{`kind="Note Hook"`, "key=note/1244", "attempt=1"} {
		assert.Contains(t, line, key, "the stable keys of a delivery")
	}
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
	assert.Equal(t, int64(2), h.Stats().Accepted)
	close(release)
	assert.Equal(t, 2, <-started)
}

// issueAt is issueDelivery with another updated_at, so that the key differs.
func issueAt(t *testing.T, id int, updated string) *http.Request {
	body := strings.Replace(string(readFile(t, "spec/issue.json")), `"id":4417`, `"id":`+itoa(id), 1)
	body = strings.Replace(body, `"updated_at":"2016-06-21 09:14:07 UTC"`, `"updated_at":"`+updated+`"`, 1)
	r := delivery(t, KindIssue, "spec/issue.json", "")
	r.Body = readCloser(body)
	return r
}

func waitIdle(t *testing.T, h *Handler) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, h.WaitIdle(ctx))
}

func TestHandlerDuplicateSuppressed(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	h := newHandler(t, Options{OnIssue: func(ctx context.Context, _ *IssueEvent) error {
		mu.Lock()
		seen[DeliveryFrom(ctx).StateKey]++
		mu.Unlock()
		return nil
	}})
	running(t, h)
	for range 3 {
		assert.Equal(t, http.StatusOK, serve(h, issueAt(t, 5, "2016-06-21 09:14:07 UTC")).Code)
	}
	// The same issue changed later: not a duplicate.
	assert.Equal(t, http.StatusOK, serve(h, issueAt(t, 5, "2016-06-21 09:20:00 UTC")).Code)
	waitIdle(t, h)
	st := h.Stats()
	assert.Equal(t, int64(2), st.Duplicates)
	assert.Equal(t, int64(2), st.Handled)
	mu.Lock()
	assert.Equal(t, map[string]int{"issue/5/2016-06-21T09:14:07Z": 1, "issue/5/2016-06-21T09:20:00Z": 1}, seen)
	mu.Unlock()
}

// Two changes of one issue within a second (opened, then labelled by a
// bot) are two events; a state that catch-up synthesizes after them is not.
func TestDedupKeyTellsChangesOfOneSecondApart(t *testing.T) {
	handled := 0
	h := newHandler(t, Options{OnIssue: func(context.Context, *IssueEvent) error { handled++; return nil }})
	open := issueAt(t, 5, "2016-06-21 09:14:07 UTC")
	labelled := issueAt(t, 5, "2016-06-21 09:14:07 UTC")
	body, err := io.ReadAll(labelled.Body)
	require.NoError(t, err)
	labelled.Body = readCloser(strings.Replace(string(body), `"action":"open"`, `"action":"update"`, 1))
	assert.Equal(t, http.StatusOK, serve(h, open).Code)
	assert.Equal(t, http.StatusOK, serve(h, labelled).Code)

	ev, err := ParsePayload(http.Header{HeaderEvent: {string(KindIssue)}}, body)
	require.NoError(t, err)
	synth := newDelivery(http.Header{}, []byte(`{"synthesized":true}`), ev, time.Now())
	synth.Key = synth.StateKey
	assert.ErrorIs(t, h.admit(context.Background(), synth), ErrDuplicate)

	running(t, h)
	waitIdle(t, h)
	assert.Equal(t, 2, handled)
	assert.Equal(t, int64(1), h.Stats().Duplicates, "the synthesized state only")
}

func TestDedupKeysAndPartitions(t *testing.T) {
	keys := map[string]string{}
	parts := map[string]string{}
	for _, f := range []string{"push", "tag_push", "issue", "merge_request", "note_snippet", "note_issue", "note_merge_request", "build", "wiki_page"} {
		body := readFile(t, "spec/"+f+".json")
		ev, err := ParsePayload(http.Header{}, body)
		require.NoError(t, err)
		parts[f] = identityOf(ev).partition()
		if f == "note_issue" || f == "note_merge_request" {
			continue // the spec's three note examples share one id
		}
		k := DedupKey(ev, body)
		assert.NotContains(t, keys, k, "%s shares a key with %s", f, keys[k])
		keys[k] = f
	}
	assert.Contains(t, keys, "push/31/refs/heads/master/4c1e0d52b7a9f3e8d6c2a1b0e9f8d7c6b5a49382/a93f7e2c1d0b9a8f7e6d5c4b3a29180f7e6d5c4b")
	assert.Equal(t, "issue/4417/2016-06-21T09:14:07Z/", keyPrefixOf(keys, "issue"))
	assert.Equal(t, "merge_request/902/2016-06-21T10:02:55Z/", keyPrefixOf(keys, "merge_request"))
	assert.Contains(t, keys, "note/7731")
	assert.Contains(t, keys, "build/15520/success")
	assert.Equal(t, "body/", keyPrefixOf(keys, "wiki_page"))

	assert.Equal(t, "push/31/refs/heads/master", parts["push"])
	assert.Equal(t, "issue/4417", parts["issue"])
	assert.Equal(t, "merge_request/902", parts["merge_request"])
	assert.Equal(t, "build/15520", parts["build"])
	assert.Equal(t, "", parts["note_snippet"])
	assert.Equal(t, "", parts["wiki_page"])
	assert.Regexp(t, `^issue/\d+$`, parts["note_issue"])
	assert.Regexp(t, `^merge_request/\d+$`, parts["note_merge_request"])
}

func keyPrefixOf(keys map[string]string, file string) string {
	for k, f := range keys {
		if f == file {
			return strings.TrimRight(k, "0123456789abcdef")
		}
	}
	return ""
}

func TestNewDeliveryDropsSecrets(t *testing.T) {
	r := delivery(t, KindIssue, "spec/issue.json", "tok-123")
	r.Header.Set("Authorization", "Bearer abc")
	r.Header.Set("Proxy-Authorization", "Basic cHJveHk6cHc=")
	r.Header.Set("Cookie", "session=abc")
	body := readFile(t, "spec/issue.json")
	ev, err := ParsePayload(r.Header, body)
	require.NoError(t, err)
	at := time.Date(2016, 6, 21, 9, 14, 8, 0, time.UTC)
	d := newDelivery(r.Header, body, ev, at)
	assert.Equal(t, "issue/4417/2016-06-21T09:14:07Z", d.StateKey)
	assert.True(t, strings.HasPrefix(d.Key, d.StateKey+"/"), "the key adds the body's hash to the state: %s", d.Key)
	assert.Equal(t, "issue/4417", d.Partition)
	assert.Equal(t, KindIssue, d.Kind)
	assert.Equal(t, at, d.ReceivedAt)
	assert.Equal(t, body, d.Body)
	assert.Empty(t, d.Header.Get(HeaderToken))
	assert.Empty(t, d.Header.Get("Authorization"))
	assert.Empty(t, d.Header.Get("Proxy-Authorization"), "a proxy's credentials are not stored either")
	assert.Empty(t, d.Header.Get("Cookie"))
	assert.Equal(t, "application/json", d.Header.Get("Content-Type"))
	assert.Equal(t, "tok-123", r.Header.Get(HeaderToken), "the request keeps its own headers")
}

// flakyQueue fails the Puts it is told to, like a full disk.
type flakyQueue struct {
	*MemoryQueue
	mu   sync.Mutex
	fail int
}

func (q *flakyQueue) Put(ctx context.Context, d *Delivery) error {
	q.mu.Lock()
	if q.fail > 0 {
		q.fail--
		q.mu.Unlock()
		return errors.New("write /var/lib/hooks/queue.db: no space left on device")
	}
	q.mu.Unlock()
	return q.MemoryQueue.Put(ctx, d)
}

func TestStoreFailureIsAskedAgainAndKeyIsNotRecorded(t *testing.T) {
	for _, answer503 := range []bool{false, true} {
		var logs bytes.Buffer
		q := &flakyQueue{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), fail: 1}
		defer q.Close()
		handled := 0
		h := newHandler(t, Options{Queue: q, Answer503: answer503, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			OnIssue: func(context.Context, *IssueEvent) error { handled++; return nil }})
		running(t, h)
		want, st := askedAgain, Stats{Received: 2, AskedAgain: 1, Accepted: 1, Handled: 1}
		if answer503 {
			want, st = http.StatusServiceUnavailable, Stats{Received: 2, Dropped: 1, Accepted: 1, Handled: 1}
		}
		assert.Equal(t, want, serve(h, issueDelivery(t, 1)).Code)
		assert.Contains(t, logs.String(), "no space left on device")
		assert.Contains(t, logs.String(), "kind=\"Issue Hook\" key=issue/1/2016-06-21T09:14:07Z/")
		assert.NotContains(t, logs.String(), "ETA", "no body in the log")
		// The repeat must be handled, not taken for a duplicate.
		assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
		waitIdle(t, h)
		assert.Equal(t, 1, handled)
		assert.Equal(t, st, h.Stats())
	}
}

func TestQueueBoundIsAskedAgain(t *testing.T) {
	started, release := make(chan int, 2), make(chan struct{})
	q := NewMemoryQueue(MemoryQueueOptions{MaxPending: 1})
	defer q.Close()
	h := newHandler(t, Options{Queue: q, Workers: 1, OnIssue: blockingIssues(started, release)})
	running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	<-started
	assert.Equal(t, askedAgain, serve(h, issueDelivery(t, 2)).Code)
	close(release)
	waitIdle(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 2)).Code, "room again")
	assert.Equal(t, 2, <-started)
	waitIdle(t, h)
	assert.Equal(t, Stats{Received: 3, AskedAgain: 1, Accepted: 2, Handled: 2}, h.Stats())
}

func TestAcceptedBeforeRunIsHandled(t *testing.T) {
	got := make(chan int, 3)
	h := newHandler(t, Options{OnIssue: func(_ context.Context, e *IssueEvent) error { got <- e.ObjectAttributes.ID; return nil }})
	for id := range 3 {
		assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, id+1)).Code)
	}
	running(t, h)
	waitIdle(t, h)
	assert.ElementsMatch(t, []int{1, 2, 3}, []int{<-got, <-got, <-got})
}

// stopDuringFirst serves three issue deliveries to a handler with one
// worker made with o, stops it while the first callback runs, and returns
// it once Run has returned.
func stopDuringFirst(t *testing.T, o Options) *Handler {
	t.Helper()
	started, release := make(chan int, 5), make(chan struct{})
	o.Workers, o.OnIssue = 1, blockingIssues(started, release)
	h := newHandler(t, o)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- h.Run(ctx) }()
	for id := range 3 {
		assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, id+1)).Code)
	}
	<-started
	cancel()
	close(release) // the running callback may finish after the stop began
	require.NoError(t, <-stopped)
	return h
}

func TestStopLeavesTheRestQueued(t *testing.T) {
	q := NewMemoryQueue(MemoryQueueOptions{})
	defer q.Close()
	h := stopDuringFirst(t, Options{Queue: q})
	assert.Equal(t, int64(1), h.Stats().Handled)
	assert.Equal(t, 2, q.Len(), "not started: still queued")
	goleak.VerifyNone(t)
}

func TestStopCancelsAfterDrainTimeout(t *testing.T) {
	started := make(chan int, 5)
	q := NewMemoryQueue(MemoryQueueOptions{})
	defer q.Close()
	h := newHandler(t, Options{Queue: q, Workers: 1, DrainTimeout: time.Millisecond, OnIssue: blockingIssues(started, nil)})
	stop := running(t, h)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	<-started
	require.NoError(t, stop())
	st := h.Stats()
	assert.Zero(t, st.Handled+st.Retried+st.DeadLettered, "a callback cut short by the stop is not counted as a failure")
	assert.Equal(t, 1, q.Len(), "it stays queued")
	goleak.VerifyNone(t)
}

func TestOwnQueueClosedByRun(t *testing.T) {
	h := newHandler(t, Options{OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	stop := running(t, h)
	require.NoError(t, stop())
	assert.Equal(t, askedAgain, serve(h, issueDelivery(t, 9)).Code, "a stopped handler asks for the delivery again")
	assert.Error(t, h.Run(context.Background()), "Run twice")
}

func TestRetriesThenDeadLetter(t *testing.T) {
	var mu sync.Mutex
	attempts := map[string][]int{}
	pushOK := false
	record := func(ctx context.Context) {
		d := DeliveryFrom(ctx)
		mu.Lock()
		attempts[d.Key] = append(attempts[d.Key], d.Attempt)
		mu.Unlock()
	}
	h := newHandler(t, Options{MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: 2 * time.Millisecond,
		OnIssue: func(ctx context.Context, _ *IssueEvent) error {
			record(ctx)
			if DeliveryFrom(ctx).Attempt < 3 {
				return errors.New("boom")
			}
			return nil
		},
		OnPush: func(ctx context.Context, _ *PushEvent) error {
			record(ctx)
			mu.Lock()
			ok := pushOK
			mu.Unlock()
			if !ok {
				panic("bad")
			}
			return nil
		},
	})
	running(t, h)
	serve(h, delivery(t, KindIssue, "spec/issue.json", ""))
	serve(h, delivery(t, KindPush, "spec/push.json", ""))
	waitIdle(t, h)
	assert.Equal(t, Stats{Received: 2, Accepted: 2, Handled: 1, Retried: 4, DeadLettered: 1}, h.Stats())
	mu.Lock()
	for k, a := range attempts {
		assert.Equal(t, []int{1, 2, 3}, a, k)
	}
	mu.Unlock()

	ctx := context.Background()
	dead, err := h.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	assert.Equal(t, KindPush, dead[0].Kind)
	assert.Equal(t, "panic: bad", dead[0].LastError)
	assert.Equal(t, 3, dead[0].Attempt)

	mu.Lock()
	pushOK = true
	mu.Unlock()
	require.NoError(t, h.Requeue(ctx, dead[0].ID))
	waitIdle(t, h)
	assert.Equal(t, int64(2), h.Stats().Handled)
	dead, err = h.DeadLetters(ctx)
	require.NoError(t, err)
	assert.Empty(t, dead)
	assert.Error(t, h.Requeue(ctx, 999), "not dead-lettered")
	assert.Error(t, h.DeleteDeadLetter(ctx, 999))
}

func TestDeleteDeadLetter(t *testing.T) {
	h := newHandler(t, Options{MaxAttempts: 1, OnIssue: func(context.Context, *IssueEvent) error { return errors.New("no") }})
	running(t, h)
	serve(h, issueDelivery(t, 1))
	waitIdle(t, h)
	ctx := context.Background()
	dead, err := h.DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.NoError(t, h.DeleteDeadLetter(ctx, dead[0].ID))
	dead, err = h.DeadLetters(ctx)
	require.NoError(t, err)
	assert.Empty(t, dead)
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	assert.Equal(t, int64(1), h.Stats().Duplicates, "a deleted dead letter's key is still remembered")
}

// TestOrderPerObject: several workers; deliveries of one issue run one at a
// time in arrival order, and a retried head holds back the rest of its
// issue, while another issue goes on.
func TestOrderPerObject(t *testing.T) {
	var mu sync.Mutex
	order := map[int][]string{}
	running2 := map[int]int{}
	failedOnce := false
	h := newHandler(t, Options{Workers: 8, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		OnIssue: func(ctx context.Context, e *IssueEvent) error {
			id := e.ObjectAttributes.ID
			mu.Lock()
			running2[id]++
			if running2[id] > 1 {
				mu.Unlock()
				t.Errorf("two callbacks of issue %d at once", id)
				return nil
			}
			mu.Unlock()
			time.Sleep(time.Millisecond) // widen the window for a race
			mu.Lock()
			defer mu.Unlock()
			running2[id]--
			if id == 1 && !failedOnce {
				failedOnce = true
				return errors.New("first attempt fails")
			}
			order[id] = append(order[id], e.ObjectAttributes.UpdatedAt.UTC().Format(time.RFC3339))
			return nil
		}})
	var want []string
	for i := range 20 {
		at := fmt.Sprintf("2016-06-21 09:%02d:00 UTC", i)
		want = append(want, fmt.Sprintf("2016-06-21T09:%02d:00Z", i))
		for id := 1; id <= 3; id++ {
			require.Equal(t, http.StatusOK, serve(h, issueAt(t, id, at)).Code)
		}
	}
	running(t, h)
	waitIdle(t, h)
	mu.Lock()
	defer mu.Unlock()
	for id := 1; id <= 3; id++ {
		assert.Equal(t, want, order[id], "issue %d", id)
	}
	assert.Equal(t, int64(1), h.Stats().Retried)
}

// TestObjectsRunInParallel: issue 1's callback waits for issue 2's to start,
// which only works if they run at once.
func TestObjectsRunInParallel(t *testing.T) {
	twoStarted := make(chan struct{})
	h := newHandler(t, Options{Workers: 2, OnIssue: func(ctx context.Context, e *IssueEvent) error {
		if e.ObjectAttributes.ID == 2 {
			close(twoStarted)
			return nil
		}
		select {
		case <-twoStarted:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	running(t, h)
	serve(h, issueDelivery(t, 1))
	serve(h, issueDelivery(t, 2))
	waitIdle(t, h)
	assert.Equal(t, int64(2), h.Stats().Handled)
}

func TestOnDeliveryGetsEveryKind(t *testing.T) {
	var mu sync.Mutex
	var got []*Delivery
	h := newHandler(t, Options{Secret: "tok", OnDelivery: func(ctx context.Context, d *Delivery) error {
		assert.Same(t, d, DeliveryFrom(ctx))
		mu.Lock()
		got = append(got, d)
		mu.Unlock()
		return nil
	}})
	running(t, h)
	serve(h, delivery(t, KindIssue, "spec/issue.json", "tok"))
	serve(h, delivery(t, "System Hook", "spec/push.json", "tok"))
	waitIdle(t, h)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	kinds := []Kind{got[0].Kind, got[1].Kind}
	assert.ElementsMatch(t, []Kind{KindIssue, "System Hook"}, kinds)
	for _, d := range got {
		assert.Empty(t, d.Header.Get(HeaderToken))
		assert.Equal(t, 1, d.Attempt)
	}
}

func TestNewHandlerOptions(t *testing.T) {
	_, err := NewHandler(Options{Workers: -1})
	assert.Error(t, err)
	_, err = NewHandler(Options{StuckAttempts: -1})
	assert.ErrorContains(t, err, "negative option")
	_, err = NewHandler(Options{RetryMin: time.Minute, RetryMax: time.Second})
	assert.ErrorContains(t, err, "RetryMax")
	_, err = NewHandler(Options{OnDelivery: func(context.Context, *Delivery) error { return nil },
		OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	assert.ErrorContains(t, err, "exclude each other")
}

func TestBackoff(t *testing.T) {
	h := newHandler(t, Options{RetryMin: time.Second, RetryMax: 10 * time.Second})
	var got []time.Duration
	for n := 1; n <= 6; n++ {
		got = append(got, h.backoff(n))
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 10 * s, 10 * s}, got)
}

// otherQueue hides the WaitIdle method of the queue it wraps.
type otherQueue struct{ Queue }

func TestWaitIdleNeedsAQueueThatCanTell(t *testing.T) {
	q := NewMemoryQueue(MemoryQueueOptions{})
	defer q.Close()
	h := newHandler(t, Options{Queue: otherQueue{q}})
	assert.ErrorIs(t, h.WaitIdle(context.Background()), errors.ErrUnsupported)
}

// TestProbeAgreesWithDecoder: the identity read from the few values that
// name a delivery is the one of the decoded event, for every payload at hand.
func TestProbeAgreesWithDecoder(t *testing.T) {
	files, err := filepath.Glob("testdata/*/*.json")
	require.NoError(t, err)
	probed := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		ev, _ := ParsePayload(http.Header{}, body)
		if ev == nil {
			continue
		}
		id, ok := probeIdentity(ev.Kind(), body)
		if !ok {
			continue
		}
		probed++
		full := identityOf(ev)
		assert.Equal(t, full.key(body), id.key(body), f)
		assert.Equal(t, full.partition(), id.partition(), f)
	}
	t.Logf("%d of %d payloads probed", probed, len(files))
	assert.Greater(t, probed, len(files)/2)
}

// stopOnTake is a queue whose first Take hands out a delivery just as the
// stop begins.
type stopOnTake struct {
	*MemoryQueue
	stop context.CancelFunc
	once sync.Once
}

func (q *stopOnTake) Take(ctx context.Context) (*Delivery, error) {
	d, err := q.MemoryQueue.Take(ctx)
	q.once.Do(q.stop)
	return d, err
}

func TestDeliveryTakenAsStopBeginsIsHandled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	q := &stopOnTake{MemoryQueue: NewMemoryQueue(MemoryQueueOptions{}), stop: cancel}
	defer q.Close()
	handled := 0
	h := newHandler(t, Options{Queue: q, Workers: 1,
		OnIssue: func(context.Context, *IssueEvent) error { handled++; return nil }})
	assert.Equal(t, http.StatusOK, serve(h, issueDelivery(t, 1)).Code)
	require.NoError(t, h.Run(ctx))
	assert.Equal(t, 1, handled, "a leased delivery is not abandoned")
	assert.Zero(t, q.Len())
}

// A retried callback gets the event as it arrived, not as the failed
// attempt left it.
func TestRetryGetsTheEventAfresh(t *testing.T) {
	var titles []string
	h := newHandler(t, Options{Workers: 1, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		OnIssue: func(ctx context.Context, e *IssueEvent) error {
			titles = append(titles, e.ObjectAttributes.Title)
			if DeliveryFrom(ctx).Attempt == 1 {
				e.ObjectAttributes.Title = "changed by the first attempt"
				return errors.New("boom")
			}
			return nil
		}})
	running(t, h)
	r := delivery(t, KindIssue, "spec/issue.json", "")
	// A value the probe does not take: the full decoder runs at once, and
	// the decoded event is kept for the worker.
	r.Body = readCloser(strings.Replace(string(readFile(t, "spec/issue.json")), `"id":4417`, `"id":4417.5`, 1))
	require.Equal(t, http.StatusOK, serve(h, r).Code)
	waitIdle(t, h)
	require.Len(t, titles, 2)
	assert.Equal(t, titles[0], titles[1])
}

func TestRunReturnsWhenItsQueueIsClosed(t *testing.T) {
	q := NewMemoryQueue(MemoryQueueOptions{})
	h := newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- h.Run(ctx) }()
	require.NoError(t, q.Close())
	require.ErrorIs(t, <-stopped, ErrQueueClosed)
	assert.NoError(t, ctx.Err(), "Run waited for its context rather than return when its queue closed")
}

// TestReadBodyOfAnyLength: the announced length only sizes the buffer; the
// body reads whole whatever its length, and a failed read is reported.
func TestReadBodyOfAnyLength(t *testing.T) {
	body := []byte(`{"object_kind":"push"}`)
	n := int64(len(body))
	for name, c := range map[string]struct {
		r         io.Reader
		announced int64
	}{
		"exact":              {bytes.NewReader(body), n},
		"exact, EOF at once": {iotest.DataErrReader(bytes.NewReader(body)), n},
		"one byte at a time": {iotest.OneByteReader(bytes.NewReader(body)), n},
		"announced shorter":  {bytes.NewReader(body), n - 5},
		"announced longer":   {bytes.NewReader(body), n + 5},
		"not announced":      {bytes.NewReader(body), -1},
		"over the limit":     {bytes.NewReader(body), 1 << 40},
	} {
		got, err := readBody(c.r, c.announced, 1<<20)
		require.NoError(t, err, name)
		assert.Equal(t, body, got, name)
	}
	broken := errors.New("connection reset")
	got, err := readBody(io.MultiReader(bytes.NewReader(body[:5]), iotest.ErrReader(broken)), n, 1<<20)
	assert.ErrorIs(t, err, broken)
	assert.Equal(t, body[:5], got)
}

// A handler with the queue it made itself handles, at a stop, what that
// queue holds ready within DrainTimeout: Run closes the queue, so it would
// be lost.
func TestStopDrainsTheQueueItMade(t *testing.T) {
	h := stopDuringFirst(t, Options{DrainTimeout: 10 * time.Second})
	assert.Equal(t, int64(3), h.Stats().Handled, "the two not started when the stop came are handled too")
	goleak.VerifyNone(t)
}
