package collabtest

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Webhook delivery.
//
// When the fake's state changes, every hook of the project whose flags select
// the kind gets one job, queued with its body already built, so the body shows
// the state at event time. Each hook has its own queue, drained in order by
// one goroutine that exists only while the queue has work.
//
// Failures follow the deployed servers: a status code (any, 4xx and 5xx
// included) is final, and so are failures before a connection is established
// (DNS, refused, TLS, connect timeout) and a connection reset. A read timeout
// and other failures after connecting (such as too many redirects) are
// redelivered with the same body, at most len(redeliveryDelays) times, after
// the delays below. Deployed servers retry up to 25 times over about three
// weeks (n⁴+15 seconds apart); the fake uses the same curve in milliseconds and
// stops after 5 retries, so a test that times out on purpose ends quickly.

// defaultWebhookTimeout is the deployed servers' webhook_timeout, used for
// connecting and for waiting for the answer.
const defaultWebhookTimeout = 10 * time.Second

// redeliveryDelays are the waits before the 1st, 2nd... redelivery (n⁴+15 ms).
var redeliveryDelays = []time.Duration{
	16 * time.Millisecond, 31 * time.Millisecond, 96 * time.Millisecond, 271 * time.Millisecond, 640 * time.Millisecond,
}

// errDelivererClosed answers the Wait helpers once the server is closed.
var errDelivererClosed = errors.New("collabtest: server closed, webhook delivery stopped")

// Delivery is one attempt to deliver one event to one hook.
type Delivery struct {
	HookID    int
	ProjectID int
	URL       string      // the hook URL, as registered
	Event     string      // the X-Gitlab-Event value, e.g. "Issue Hook"
	Header    http.Header // the request headers sent
	Body      []byte      // the JSON body sent
	Attempt   int         // 1 for the first attempt, 2 for the first redelivery...
	Status    int         // the receiver's HTTP status; 0 when there was none
	Err       string      // the transport error ("" when a status came back), e.g. a read timeout
	Duplicate bool        // sent again by an injected duplicate fault
}

// DeliveryFault changes the next delivery.
type DeliveryFault struct {
	Duplicate bool          // deliver the same body twice
	Drop      bool          // never send it (recorded with Err "dropped")
	Delay     time.Duration // wait this long before sending
}

// hookJob is one event for one hook, with everything needed to send it.
type hookJob struct {
	hookID, projectID int
	url, event        string
	body              []byte
	verifyTLS         bool
	token             string // set by enqueue from the hook's secret
	fault             DeliveryFault
	duplicate         bool
}

// deliverer queues and sends hook jobs. Its lock is never held while
// sending, and it never takes the server's state lock, so a receiver may
// call the fake back from its handler.
type deliverer struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	timeout time.Duration
	tokens  map[int]string     // hook id -> secret token
	faults  []DeliveryFault    // for the next jobs queued, in order
	queues  map[int][]*hookJob // present while the hook's goroutine runs
	busy    int                // jobs queued or in flight
	done    []Delivery         // completed attempts
	changed chan struct{}      // closed and replaced on every change
	closed  bool
}

func newDeliverer() *deliverer {
	ctx, cancel := context.WithCancel(context.Background())
	return &deliverer{
		ctx: ctx, cancel: cancel, timeout: defaultWebhookTimeout,
		tokens: map[int]string{}, queues: map[int][]*hookJob{}, changed: make(chan struct{}),
	}
}

// notifyLocked wakes the waiters; d.mu must be held.
func (d *deliverer) notifyLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// enqueue queues a job on its hook's queue, applying the next injected
// fault, and starts the hook's goroutine if it is not running.
func (d *deliverer) enqueue(job hookJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	job.token = d.tokens[job.hookID]
	if len(d.faults) > 0 {
		job.fault, d.faults = d.faults[0], d.faults[1:]
	}
	jobs := []*hookJob{&job}
	if job.fault.Duplicate {
		dup := job
		dup.duplicate, dup.fault = true, DeliveryFault{Drop: job.fault.Drop}
		jobs = append(jobs, &dup)
	}
	q, running := d.queues[job.hookID]
	d.queues[job.hookID] = append(q, jobs...)
	d.busy += len(jobs)
	d.notifyLocked()
	if !running {
		d.wg.Add(1)
		go d.run(job.hookID)
	}
}

// run sends a hook's jobs in order until its queue is empty or delivery stops.
func (d *deliverer) run(hookID int) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		q := d.queues[hookID]
		if len(q) == 0 || d.closed {
			delete(d.queues, hookID)
			d.mu.Unlock()
			return
		}
		job := q[0]
		d.queues[hookID] = q[1:]
		d.mu.Unlock()

		d.send(job)

		d.mu.Lock()
		d.busy--
		d.notifyLocked()
		d.mu.Unlock()
	}
}

// send delivers one job, redelivering as the schedule allows.
func (d *deliverer) send(job *hookJob) {
	if job.fault.Delay > 0 && !d.sleep(job.fault.Delay) {
		return
	}
	for attempt := 1; ; attempt++ {
		del, retry := d.attempt(job, attempt)
		if d.ctx.Err() != nil {
			return // stopped: the attempt was cut short by Close, not by the receiver
		}
		d.mu.Lock()
		d.done = append(d.done, del)
		d.notifyLocked()
		d.mu.Unlock()
		if !retry || attempt > len(redeliveryDelays) || !d.sleep(redeliveryDelays[attempt-1]) {
			return
		}
	}
}

// sleep waits for dur, reporting false when delivery stops first.
func (d *deliverer) sleep(dur time.Duration) bool {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-d.ctx.Done():
		return false
	}
}

// attempt sends the job once and reports whether a failure is redelivered.
func (d *deliverer) attempt(job *hookJob, n int) (Delivery, bool) {
	del := Delivery{HookID: job.hookID, ProjectID: job.projectID, URL: job.url, Event: job.event, Body: job.body,
		Attempt: n, Duplicate: job.duplicate}
	req, err := newHookRequest(d.ctx, job)
	if err != nil {
		del.Err = err.Error()
		return del, false
	}
	del.Header = req.Header.Clone()
	if job.fault.Drop {
		del.Err = "dropped"
		return del, false
	}
	var connected atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	}))
	d.mu.Lock()
	timeout := d.timeout
	d.mu.Unlock()
	resp, err := hookClient(timeout, job.verifyTLS).Do(req)
	if err != nil {
		del.Err = err.Error()
		return del, connected.Load() && !errors.Is(err, syscall.ECONNRESET)
	}
	resp.Body.Close() // the answer's body is ignored, as deployed servers do
	del.Status = resp.StatusCode
	return del, false
}

// newHookRequest builds the POST: the URL's user:password moves to a Basic
// Authorization header; the token header is sent only when non-blank.
func newHookRequest(ctx context.Context, job *hookJob) (*http.Request, error) {
	u, err := url.Parse(job.url)
	if err != nil {
		return nil, err
	}
	user := u.User
	u.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), strings.NewReader(string(job.body)))
	if err != nil {
		return nil, err
	}
	if user != nil {
		pw, _ := user.Password()
		req.SetBasicAuth(user.Username(), pw)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", job.event)
	if strings.TrimSpace(job.token) != "" {
		req.Header.Set("X-Gitlab-Token", job.token)
	}
	return req, nil
}

// hookClient applies the timeout to connecting and to waiting for the
// answer, checks certificates only when verifyTLS is set, follows at most 5
// redirects and keeps no idle connection (so no goroutine outlives a send).
func hookClient(timeout time.Duration, verifyTLS bool) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: timeout}).DialContext,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			TLSClientConfig:       &tls.Config{InsecureSkipVerify: !verifyTLS},
			DisableKeepAlives:     true,
		},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) > 5 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// deliveries copies the completed attempts.
func (d *deliverer) deliveries() []Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Delivery(nil), d.done...)
}

// waitFor blocks until cond (run with d.mu held) holds, ctx ends or
// delivery stops.
func (d *deliverer) waitFor(ctx context.Context, cond func() bool) error {
	for {
		d.mu.Lock()
		ok, changed, closed := cond(), d.changed, d.closed
		d.mu.Unlock()
		switch {
		case ok:
			return nil
		case closed:
			return errDelivererClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// close stops delivery: queued jobs are dropped, attempts in flight are cut
// short, and every delivery goroutine has ended when it returns.
func (d *deliverer) close() {
	d.mu.Lock()
	if !d.closed {
		d.closed = true
		d.notifyLocked()
	}
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}

// PushCommit is one commit of a seeded push.
type PushCommit struct {
	Message                  string
	AuthorName, AuthorEmail  string
	Added, Modified, Removed []string
}
