package collabtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// received is one request a test receiver got.
type received struct {
	header http.Header
	body   string
	path   string
}

// receiver is a hook endpoint that records every request and answers with
// answer(n), n counting requests from 1.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, useTLS bool, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: string(b), path: r.URL.RequestURI()})
		n := len(rc.got)
		rc.mu.Unlock()
		if answer != nil {
			answer(n, w, r)
		}
	})
	if useTLS {
		rc.Server = httptest.NewTLSServer(h)
	} else {
		rc.Server = httptest.NewServer(h)
	}
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// hangUntilGone never answers: the sender's read timeout (or Close) ends it.
func hangUntilGone(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// waitCtx bounds a Wait helper so that a broken test fails instead of hanging.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newTestDeliverer(t *testing.T) *deliverer {
	d := newDeliverer()
	t.Cleanup(d.close)
	return d
}

func testJob(hookID int, url, body string) hookJob {
	return hookJob{hookID: hookID, projectID: 7, url: url, event: "Issue Hook", body: []byte(body), verifyTLS: true}
}

func (d *deliverer) waitCount(t *testing.T, n int) []Delivery {
	t.Helper()
	require.NoError(t, d.waitFor(waitCtx(t), func() bool { return len(d.done) >= n }))
	return d.deliveries()
}

func (d *deliverer) waitIdle(t *testing.T) []Delivery {
	t.Helper()
	require.NoError(t, d.waitFor(waitCtx(t), func() bool { return d.busy == 0 }))
	return d.deliveries()
}

func TestDeliveryHeadersAndBody(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.tokens[3] = "s3cret token"
	d.enqueue(testJob(3, rc.URL+"/hook?x=1", `{"a":"b"}`))
	d.enqueue(testJob(4, rc.URL+"/hook", `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 2)
	for _, del := range got {
		assert.Equal(t, 200, del.Status)
		assert.Empty(t, del.Err)
		assert.Equal(t, 1, del.Attempt)
		assert.False(t, del.Duplicate)
		assert.Equal(t, 7, del.ProjectID)
		assert.Equal(t, "Issue Hook", del.Event)
	}
	reqs := rc.requests()
	require.Len(t, reqs, 2)
	byPath := map[string]received{}
	for _, r := range reqs {
		byPath[r.path] = r
		assert.Equal(t, []string{"application/json"}, r.header["Content-Type"])
		assert.Equal(t, []string{"Issue Hook"}, r.header["X-Gitlab-Event"])
	}
	assert.Equal(t, []string{"s3cret token"}, byPath["/hook?x=1"].header["X-Gitlab-Token"], "the query string is kept")
	assert.Equal(t, `{"a":"b"}`, byPath["/hook?x=1"].body)
	_, present := byPath["/hook"].header["X-Gitlab-Token"]
	assert.False(t, present, "no token header without a token")
}

func TestDeliveryBlankTokenIsNotSent(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.tokens[1] = "  "
	d.enqueue(testJob(1, rc.URL, `{}`))
	d.waitIdle(t)
	_, present := rc.requests()[0].header["X-Gitlab-Token"]
	assert.False(t, present)
}

func TestDeliveryMovesURLCredentialsToBasicAuth(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	url := "http://bot:p%40ss@" + rc.Listener.Addr().String() + "/in"
	d.enqueue(testJob(1, url, `{}`))
	got := d.waitIdle(t)
	assert.Equal(t, url, got[0].URL, "the hook URL as registered")
	r := rc.requests()[0]
	req := &http.Request{Header: r.header}
	user, pass, ok := req.BasicAuth()
	require.True(t, ok)
	assert.Equal(t, "bot", user)
	assert.Equal(t, "p@ss", pass)
	assert.Equal(t, "/in", r.path)
}

func TestDeliveryInOrderPerHook(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	const n = 30
	for i := range n {
		d.enqueue(testJob(1, rc.URL+"/one", strconv.Itoa(i)))
		d.enqueue(testJob(2, rc.URL+"/two", strconv.Itoa(i)))
	}
	got := d.waitIdle(t)
	require.Len(t, got, 2*n)
	next := map[string]int{}
	for _, r := range rc.requests() {
		assert.Equal(t, strconv.Itoa(next[r.path]), r.body, r.path)
		next[r.path]++
	}
	assert.Equal(t, map[string]int{"/one": n, "/two": n}, next)
	d.mu.Lock()
	assert.Empty(t, d.queues, "no hook goroutine is left once the queues are empty")
	d.mu.Unlock()
}

func TestRedeliveryAfterReadTimeoutSendsTheSameBody(t *testing.T) {
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hangUntilGone(n, w, r)
		}
	})
	d := newTestDeliverer(t)
	d.timeout = 20 * time.Millisecond
	d.enqueue(testJob(1, rc.URL, `{"id":1}`))
	got := d.waitIdle(t)
	require.Len(t, got, 2)
	assert.Equal(t, 1, got[0].Attempt)
	assert.Zero(t, got[0].Status)
	assert.Contains(t, got[0].Err, "timeout")
	assert.Equal(t, 2, got[1].Attempt)
	assert.Equal(t, 200, got[1].Status)
	reqs := rc.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, reqs[0].body, reqs[1].body)
	assert.Equal(t, `{"id":1}`, reqs[1].body)
}

func TestRedeliveryGivesUpAfterTheSchedule(t *testing.T) {
	rc := newReceiver(t, false, hangUntilGone)
	d := newTestDeliverer(t)
	d.timeout = 5 * time.Millisecond
	d.enqueue(testJob(1, rc.URL, `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1+len(redeliveryDelays))
	for i, del := range got {
		assert.Equal(t, i+1, del.Attempt)
		assert.NotEmpty(t, del.Err)
	}
}

func TestNoRedeliveryAfterAStatus(t *testing.T) {
	statuses := []int{http.StatusNotFound, http.StatusInternalServerError, http.StatusBadGateway, http.StatusFound}
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= len(statuses) {
			if statuses[n-1] == http.StatusFound {
				w.Header().Set("Location", "/landed")
			}
			w.WriteHeader(statuses[n-1])
		}
	})
	d := newTestDeliverer(t)
	for range statuses {
		d.enqueue(testJob(1, rc.URL, `{}`))
	}
	got := d.waitIdle(t)
	require.Len(t, got, len(statuses))
	for i, del := range got {
		assert.Equal(t, 1, del.Attempt)
		assert.Empty(t, del.Err)
		want := statuses[i]
		if want == http.StatusFound {
			want = http.StatusOK // the redirect was followed
		}
		assert.Equal(t, want, del.Status)
	}
	assert.Len(t, rc.requests(), len(statuses)+1, "one request each, plus the followed redirect")
}

func TestNoRedeliveryAfterConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	d := newTestDeliverer(t)
	d.enqueue(testJob(1, "http://"+addr+"/hook", `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Err, "refused")
	assert.Zero(t, got[0].Status)
}

func TestRedeliveryAfterTooManyRedirects(t *testing.T) {
	rc := newReceiver(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	d := newTestDeliverer(t)
	d.enqueue(testJob(1, rc.URL, `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1+len(redeliveryDelays))
	assert.Contains(t, got[0].Err, "too many redirects")
	assert.Len(t, rc.requests(), 6*len(got), "the first request and 5 redirects per attempt")
}

func TestTLSVerification(t *testing.T) {
	rc := newReceiver(t, true, nil)
	d := newTestDeliverer(t)
	job := testJob(1, rc.URL, `{}`)
	d.enqueue(job)
	job.verifyTLS, job.hookID = false, 2
	d.enqueue(job)
	got := d.waitIdle(t)
	require.Len(t, got, 2, "a certificate error is not redelivered")
	byHook := map[int]Delivery{got[0].HookID: got[0], got[1].HookID: got[1]}
	assert.Zero(t, byHook[1].Status)
	assert.Contains(t, byHook[1].Err, "certificate")
	assert.Equal(t, 200, byHook[2].Status)
	assert.Len(t, rc.requests(), 1)
}

func TestFaultDrop(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.faults = []DeliveryFault{{Drop: true}}
	d.enqueue(testJob(1, rc.URL, `{"n":1}`))
	d.enqueue(testJob(1, rc.URL, `{"n":2}`))
	got := d.waitIdle(t)
	require.Len(t, got, 2)
	assert.Equal(t, "dropped", got[0].Err)
	assert.Zero(t, got[0].Status)
	assert.Equal(t, `{"n":1}`, string(got[0].Body))
	assert.Equal(t, []string{"Issue Hook"}, got[0].Header["X-Gitlab-Event"], "the headers it would have sent")
	assert.Equal(t, 200, got[1].Status)
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, `{"n":2}`, reqs[0].body)
}

func TestFaultDuplicate(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.faults = []DeliveryFault{{Duplicate: true}}
	d.enqueue(testJob(1, rc.URL, `{"n":1}`))
	d.enqueue(testJob(1, rc.URL, `{"n":2}`))
	got := d.waitIdle(t)
	require.Len(t, got, 3)
	assert.False(t, got[0].Duplicate)
	assert.True(t, got[1].Duplicate)
	assert.False(t, got[2].Duplicate)
	var bodies []string
	for _, r := range rc.requests() {
		bodies = append(bodies, r.body)
	}
	assert.Equal(t, []string{`{"n":1}`, `{"n":1}`, `{"n":2}`}, bodies)
}

func TestFaultDelayHoldsOnlyItsHook(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newDeliverer()
	d.faults = []DeliveryFault{{Delay: time.Hour}}
	d.enqueue(testJob(1, rc.URL+"/late", `{}`))
	d.enqueue(testJob(1, rc.URL+"/late", `{}`))
	d.enqueue(testJob(2, rc.URL+"/free", `{}`))
	got := d.waitCount(t, 1)
	assert.Equal(t, 2, got[0].HookID)
	d.close() // ends the delay: nothing of hook 1 is sent or recorded
	assert.Len(t, d.deliveries(), 1)
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/free", reqs[0].path)
}

func TestFaultShortDelayDelivers(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.faults = []DeliveryFault{{Delay: time.Millisecond}, {Drop: true}}
	d.enqueue(testJob(1, rc.URL, `{"n":1}`))
	d.enqueue(testJob(1, rc.URL, `{"n":2}`))
	got := d.waitIdle(t)
	require.Len(t, got, 2)
	assert.Equal(t, 200, got[0].Status)
	assert.Equal(t, "dropped", got[1].Err, "faults apply to successive jobs")
}

func TestCloseStopsDeliveryInFlight(t *testing.T) {
	arrived := make(chan struct{})
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		close(arrived)
		hangUntilGone(n, w, r)
	})
	d := newDeliverer()
	d.enqueue(testJob(1, rc.URL, `{}`))
	d.enqueue(testJob(1, rc.URL, `{}`))
	<-arrived
	d.close()
	assert.Empty(t, d.deliveries(), "an attempt cut short by Close is not recorded")
	assert.ErrorIs(t, d.waitFor(context.Background(), func() bool { return d.busy == 0 }), errDelivererClosed)
	d.enqueue(testJob(1, rc.URL, `{}`)) // ignored after Close
	assert.Len(t, rc.requests(), 1)
	d.close() // idempotent
}

func TestWaitHonoursTheContext(t *testing.T) {
	d := newTestDeliverer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := d.waitFor(ctx, func() bool { return len(d.done) >= 1 })
	assert.ErrorIs(t, err, context.Canceled)
}
