package collabtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/collabsvc/collab/internal/serverform"
)

// defaultWebhookTimeout is the deployed servers' webhook_timeout, used for
// connecting and for waiting for the answer. The fake always connects with
// it; SetWebhookTimeout changes only the wait for the answer (the read
// timeout), so that a short one cannot fail a loopback connect on a busy
// machine.
const defaultWebhookTimeout = 10 * time.Second

// redeliveryDelays are the waits before the 1st, 2nd... redelivery (n⁴+15 ms).
var redeliveryDelays = []time.Duration{
	16 * time.Millisecond, 31 * time.Millisecond, 96 * time.Millisecond, 271 * time.Millisecond, 640 * time.Millisecond,
}

// errDelivererClosed answers the Wait helpers once the server is closed.
var errDelivererClosed = errors.New("collabtest: server closed, webhook delivery stopped")

// Delivery is one attempt to deliver one event to one hook.
//
// Project hooks registered through the API receive webhooks as deployed
// servers send them: a JSON POST with Content-Type application/json,
// X-Gitlab-Event, and X-Gitlab-Token when SetHookToken gave the hook a
// secret; user:password in the hook URL becomes Basic authorization. What
// fires, for the hooks whose flags select the kind:
//   - Issue Hook: an issue opened (the API, AddIssue, or a move into the
//     project), edited ("update", when a field besides state_event was
//     sent), closed (also by a move out or a merge request that closes it)
//     or reopened. An edit that also closes or reopens sends that action
//     first, then "update".
//   - Merge Request Hook: opened (the API or AddMergeRequest), edited,
//     closed, reopened, merged (also when its build succeeds), and "update"
//     when Push adds commits to its source branch.
//   - Note Hook: a comment created on an issue or merge request.
//   - Build Hook: a build created (pending) and every status change
//     (running, success, failed, canceled), through the API, the runner API
//     or the seeding helpers; not for skipped.
//   - Push Hook: Push.
//
// The body is built when the state changes, so it shows the state at that
// time. Database times read like "2016-06-21 09:14:07 UTC"; commit
// timestamps are RFC 3339 with a numeric offset (the fake's commits are
// dated in +02:00).
//
// Delivery is asynchronous and in order per hook: each hook has a queue,
// drained by one goroutine while it has work. Any HTTP status is final (a
// 4xx or 5xx is never retried), and so are failures before a connection is
// made (DNS, refused, TLS) and a connection reset. A read timeout (see
// SetWebhookTimeout) or another failure after connecting, such as a
// connection closed without an answer or more than 5 redirects, sends the
// same body again, at most 5 times, after 16ms, 31ms, 96ms, 271ms and 640ms:
// the deployed servers' n⁴+15 curve in milliseconds instead of seconds
// (they retry 25 times over about three weeks).
//
// Not modelled: tag push, wiki page and the test button's pushes; push hooks
// for branch moves other than Push (merges, AddBranch); "closes #n" in
// pushed commit messages; comments on commits and snippets; the hook's
// current settings at delivery time (a job keeps the URL, flags and token it
// was queued with, even if the hook is edited or deleted); redirects are
// followed as Go's client does (307 and 308 repeat the POST).
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
	log    *slog.Logger // nil: no log
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

func newDeliverer(log *slog.Logger) *deliverer {
	ctx, cancel := context.WithCancel(context.Background())
	return &deliverer{
		log: log, ctx: ctx, cancel: cancel, timeout: defaultWebhookTimeout,
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
		if d.log != nil { // never the headers: they may carry the token
			d.log.Info("webhook", "hook", del.HookID, "project", del.ProjectID, "kind", del.Event, "attempt", del.Attempt,
				"status", del.Status, "err", del.Err, "duplicate", del.Duplicate)
		}
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
	readTimeout := d.timeout
	d.mu.Unlock()
	resp, err := hookClient(readTimeout, job.verifyTLS).Do(req)
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

// hookClient waits readTimeout for the answer, checks certificates only
// when verifyTLS is set, follows at most 5 redirects and keeps no idle
// connection (so no goroutine outlives a send).
func hookClient(readTimeout time.Duration, verifyTLS bool) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext:           (&net.Dialer{Timeout: defaultWebhookTimeout}).DialContext,
			TLSHandshakeTimeout:   defaultWebhookTimeout,
			ResponseHeaderTimeout: readTimeout,
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

// emit queues the payload made by build for every hook of the project that
// selects kind. It runs with s.mu held; build runs only when a hook wants it.
func (s *Server) emit(projectID int, kind hookKind, build func() any) {
	if s.projects[projectID] == nil {
		return
	}
	for _, job := range s.hookJobs(projectID, kind, build) {
		s.webhooks.enqueue(job)
	}
}

// emitIssue fires an Issue Hook; action is open, update, close or reopen.
func (s *Server) emitIssue(is *issue, actorID int, action string) {
	s.emit(is.projectID, issueHook, func() any { return s.issuePayload(is, actorID, action) })
}

// emitMergeRequest fires a Merge Request Hook; action is open, update,
// close, reopen or merge.
func (s *Server) emitMergeRequest(mr *mergeRequest, actorID int, action string) {
	s.emit(mr.projectID, mergeRequestHook, func() any { return s.mergeRequestPayload(mr, actorID, action) })
}

// emitNote fires a Note Hook for a user's comment (never a system note).
func (s *Server) emitNote(n *note) {
	if !n.system {
		s.emit(n.projectID, noteHook, func() any { return s.notePayload(n) })
	}
}

// emitBuild fires a Build Hook on a build's creation and status changes.
func (s *Server) emitBuild(b *build) {
	if b.status != "skipped" {
		s.emit(b.projectID, buildHook, func() any { return s.buildPayload(b) })
	}
}

// Deliveries returns every delivery attempt so far, in completion order.
func (s *Server) Deliveries() []Delivery { return s.webhooks.deliveries() }

// WaitDeliveries waits until at least n delivery attempts have completed,
// ctx ends or the server is closed, and returns the attempts so far.
func (s *Server) WaitDeliveries(ctx context.Context, n int) ([]Delivery, error) {
	d := s.webhooks
	err := d.waitFor(ctx, func() bool { return len(d.done) >= n })
	return d.deliveries(), err
}

// WaitIdle waits until no delivery is queued or in flight (redeliveries
// and injected delays included), ctx ends or the server is closed.
func (s *Server) WaitIdle(ctx context.Context) error {
	d := s.webhooks
	return d.waitFor(ctx, func() bool { return d.busy == 0 })
}

// SetHookToken sets the secret a hook sends as X-Gitlab-Token, which the
// API of this version cannot set; "" removes it. Deliveries queued from now
// on carry it.
func (s *Server) SetHookToken(hookID int, token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hooks[hookID] == nil {
		return fmt.Errorf("collabtest: no hook %d", hookID)
	}
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	s.webhooks.tokens[hookID] = token
	return nil
}

// SetWebhookTimeout sets how long a delivery waits for the answer once
// connected: the read timeout, 10s by default as on deployed servers (d <= 0
// restores it). A receiver that answers later gets the same body again.
// Connecting always may take 10s.
func (s *Server) SetWebhookTimeout(d time.Duration) {
	if d <= 0 {
		d = defaultWebhookTimeout
	}
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	s.webhooks.timeout = d
}

// InjectDeliveryFault changes the next delivery queued (the next event for
// one hook): faults injected in a row apply to successive deliveries.
func (s *Server) InjectDeliveryFault(f DeliveryFault) {
	s.webhooks.mu.Lock()
	defer s.webhooks.mu.Unlock()
	s.webhooks.faults = append(s.webhooks.faults, f)
}

// Push seeds a push: moves branch to the last commit (creating the branch
// if needed), records the push event in the project's events ("pushed new"
// or "pushed to", with the push payload as its data), and fires push hooks.
// It returns the new head commit id.
//
// Each commit gets a fresh id and the current time as its committer date;
// an empty author is the pusher, the project's creator. Open merge requests
// whose source branch it is get an "update" hook, as on deployed servers. An
// unknown project, a blank branch name or no commit is an error.
func (s *Server) Push(projectID int, branch string, commits ...PushCommit) (string, error) {
	if strings.TrimSpace(branch) == "" {
		return "", errors.New("collabtest: Push: empty branch name")
	}
	if len(commits) == 0 {
		return "", errors.New("collabtest: Push: no commits")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	if p == nil {
		return "", fmt.Errorf("collabtest: Push: no project %d", projectID)
	}
	pusher := s.users[p.creatorID]
	if pusher == nil {
		pusher = s.users[s.AdminID]
	}
	before, action := zeroSHA, actionPushedNew
	if old := p.branches[branch]; old != nil {
		before, action = old.commitID, actionPushedTo
	}
	now := s.now()
	pushed := make([]pushedCommit, len(commits))
	for i, c := range commits {
		c.AuthorName, c.AuthorEmail = or(c.AuthorName, pusher.name), or(c.AuthorEmail, pusher.email)
		pushed[i] = pushedCommit{PushCommit: c, id: randomHex(20), at: now}
	}
	head := pushed[len(pushed)-1]
	b := s.addBranch(p, branch, head.id)
	b.message, b.authorName, b.authorEmail = head.Message, head.AuthorName, head.AuthorEmail
	if len(pushed) > 1 {
		b.parentID = pushed[len(pushed)-2].id
	}
	s.pushed(p, pusher, action, branch, before, head.id, pushed...)
	for _, id := range sortedKeys(s.mergeRequests) {
		if mr := s.mergeRequests[id]; mr.sourceProjectID == p.id && mr.sourceBranch == branch && mr.isOpen() && !mr.deleted {
			mr.updatedAt = now
			s.emitMergeRequest(mr, pusher.id, "update")
		}
	}
	return head.id, nil
}

// Actions of push events in project events.
const (
	actionPushedNew = "pushed new"
	actionPushedTo  = "pushed to"
	actionDeleted   = "deleted"
)

// zeroSHA is the commit id a push names for a branch that did not exist
// before it, or does not after it.
const zeroSHA = serverform.ZeroSHA

// pushed records a push of branch from before to after in the project's
// events, with the push payload as its data, and fires the push hooks.
func (s *Server) pushed(p *project, pusher *user, action, branch, before, after string, commits ...pushedCommit) {
	data := s.pushData(p, pusher, branch, before, after, commits)
	s.addEvent(p.id, pusher.id, action, "", 0, "", 0)
	s.events[len(s.events)-1].data = data
	s.emit(p.id, pushHook, func() any { return data })
}

// emitTicketState fires the close or reopen hook of an issue or merge
// request whose state t now has.
func (s *Server) emitTicketState(t *ticket, by int) {
	action := "reopen"
	if t.state == "closed" {
		action = "close"
	}
	if is := s.issues[t.id]; t.kind == "Issue" && is != nil {
		s.emitIssue(is, by, action)
	} else if mr := s.mergeRequests[t.id]; t.kind == "MergeRequest" && mr != nil {
		s.emitMergeRequest(mr, by, action)
	}
}

// ticketEdited reports whether an edit of an issue or merge request sent a
// field besides state_event: deployed servers then send an "update" hook.
func (c *call) ticketEdited() bool {
	for _, name := range []string{"title", "description", "labels", "assignee_id", "milestone_id", "target_branch", "updated_at"} {
		if c.has(name) {
			return true
		}
	}
	return false
}
