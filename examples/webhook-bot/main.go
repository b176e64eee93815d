// Command webhook-bot is a bot driven by webhooks: it listens on a loopback
// port, registers a project hook, and reacts to events as they arrive. A new
// issue without labels gets a label and a comment; a "/close" comment closes
// its issue; a failed build gets a note on the merge request of its branch.
//
// The bot keeps accepted events in a queue on disk, so that an event
// answered 200 survives a stop or a crash, and on start it catches up from
// the API on what changed while it was not running.
//
// With no COLLAB_URL and COLLAB_TOKEN it starts the embedded fake server,
// plays a short scenario against it (with one delivery sent twice on
// purpose, to show duplicates are suppressed), prints what happened and
// exits. Midway the bot is stopped with an event accepted and not yet
// handled; changes happen while it is down; on restart it handles the
// pending event and catches up on the others, and checks that nothing was
// lost. With COLLAB_URL and COLLAB_TOKEN (and COLLAB_PROJECT) it serves a
// real server until interrupted; that server must be able to reach the
// loopback address (COLLAB_HOOK_ADDR, default 127.0.0.1:0), and the hook's
// secret token, set in the server's web UI, goes in WEBHOOK_SECRET.
// COLLAB_BOT_USER names the token's user, whose own comments are never taken
// as commands. The queue lives in WEBHOOK_BOT_QUEUE (default
// collab-webhook-bot in the user's cache directory).
//
// The triage-bot example does the same triage by polling; see the README
// for when to use which.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "webhook-bot:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	base, token, project := os.Getenv("COLLAB_URL"), os.Getenv("COLLAB_TOKEN"), os.Getenv("COLLAB_PROJECT")
	if base != "" && token != "" {
		if project == "" {
			return errors.New("COLLAB_PROJECT is required with COLLAB_URL")
		}
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
		return serveLive(ctx, out, base, token, project)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return scenario(ctx, out)
}

// receiver is the bot listening on a loopback port.
type receiver struct {
	h       *webhook.Handler
	url     string
	stopped chan error
	run     func()
	close   func()
	stopRun func()
}

// listen starts an HTTP server on addr for the bot's handler on q. The
// handler stores deliveries at once, and handles them once run is called.
func listen(ctx context.Context, b *bot, addr, secret string, q webhook.Queue) (*receiver, error) {
	h, err := webhook.NewHandler(b.options(secret, q))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /hook", h)
	mux.Handle("GET /healthz", h.HealthHandler())
	if b.metrics != nil {
		if _, err := b.metrics.Observer.ObserveQueue(q.Stats); err != nil {
			ln.Close()
			return nil, err
		}
		mux.Handle("GET /metrics", b.metrics)
	}
	// The serve helper's read timeouts fit the sender's 10 s wait.
	hs := webhook.NewServer("", mux)
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	r := &receiver{h: h, url: "http://" + ln.Addr().String() + "/hook", stopped: make(chan error, 1), stopRun: stopRun}
	r.run = func() { go func() { r.stopped <- h.Run(runCtx) }() }
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	r.close = func() {
		_ = hs.Close()
		<-served
		stopRun()
	}
	return r, nil
}

// stop closes the listener, drains the handler and returns its result.
func (r *receiver) stop() error {
	r.close()
	return <-r.stopped
}

// stopWorkers stops handling while deliveries are still accepted and
// stored, as when a bot is stopped in the middle of its work.
func (r *receiver) stopWorkers() error {
	r.stopRun()
	return <-r.stopped
}

// scene is the scenario's world: the fake server, alice, the bot and its
// queue directory, shared by the phases below.
type scene struct {
	ctx         context.Context
	out         io.Writer
	srv         *collabtest.Server
	admin, user *collab.Client
	project     *collab.Project
	pid         int // project.ID
	dir         string
	b           *bot
	reports     chan string
	catchUp     catchup.Options
	hookID      int
}

const hookSecret = "webhook-bot-secret"

func scenario(ctx context.Context, w io.Writer) error {
	s, cleanup, err := newScene(ctx, w)
	if err != nil {
		return err
	}
	defer cleanup()
	mr, export, err := s.firstRun()
	if err != nil {
		return err
	}
	login, slow, err := s.whileDown()
	if err != nil {
		return err
	}
	st, err := s.restart()
	if err != nil {
		return err
	}
	return nothingLost(ctx, s.out, s.admin, s.pid, st, []int{export, login}, slow, mr)
}

// newScene starts the fake server with alice, a project and the bot.
func newScene(ctx context.Context, w io.Writer) (*scene, func(), error) {
	out := &lockedWriter{w: w} // the bot's workers print too
	srv, err := collabtest.NewServer()
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(out, "using the embedded fake server at", srv.URL)
	alice := srv.Seed.User("alice")
	project := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
	srv.Seed.Member(project, alice, collab.DeveloperAccess)
	pid := project.ID
	admin, err1 := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	user, err2 := collab.NewClient(srv.URL, collab.WithPrivateToken(alice.Token))
	dir, err3 := os.MkdirTemp("", "webhook-bot-queue-")
	if err := errors.Join(err1, err2, err3); err != nil {
		srv.Close()
		return nil, nil, err
	}
	s := &scene{ctx: ctx, out: out, srv: srv, admin: admin, user: user, project: project, pid: pid, dir: dir,
		reports: make(chan string, 16), catchUp: catchup.Options{Projects: catchup.IDs(pid)}}
	s.b = &bot{c: admin, self: "root", label: "needs-triage", report: func(r string) {
		fmt.Fprintln(out, "bot:", r)
		s.reports <- r
	}}
	return s, func() { srv.Close(); os.RemoveAll(dir) }, nil
}

// waitReports waits for the bot's next n reactions, at most until ctx ends.
func (s *scene) waitReports(n int, what string) error {
	for range n {
		select {
		case <-s.reports:
		case <-s.ctx.Done():
			return fmt.Errorf("no reaction to %s: %w", what, s.ctx.Err())
		}
	}
	return nil
}

// firstRun starts the bot on its disk queue (a first catch-up records where
// the project stands), registers the hook, plays the first act, and stops
// the bot in the middle: one event accepted and not handled.
func (s *scene) firstRun() (mr, export int, err error) {
	q, err := diskqueue.Open(s.dir, diskqueue.Options{})
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, q.Close()) }()
	r, err := listen(s.ctx, s.b, "127.0.0.1:0", hookSecret, q)
	if err != nil {
		return 0, 0, err
	}
	defer r.close()
	if _, err := catchup.Run(s.ctx, r.h, s.admin, s.catchUp); err != nil {
		return 0, 0, err
	}
	r.run()
	if err := s.registerHook(r.url); err != nil {
		return 0, 0, errors.Join(err, r.stop())
	}
	if mr, err = firstAct(s.ctx, s.out, s.srv, s.user, s.pid, s.waitReports); err != nil {
		return 0, 0, errors.Join(err, r.stop())
	}
	if err := r.h.WaitIdle(s.ctx); err != nil {
		return 0, 0, errors.Join(err, r.stop())
	}
	if err := r.stopWorkers(); err != nil {
		return 0, 0, err
	}
	is, _, err := s.user.Issues.Create(s.ctx, s.pid, &collab.CreateIssueOptions{Title: "Export is empty"})
	if err != nil {
		return 0, 0, err
	}
	if err := s.srv.WaitIdle(s.ctx); err != nil {
		return 0, 0, err
	}
	st := r.h.Stats()
	fmt.Fprintf(s.out, "alice opened #%d %q; the bot stopped with %d event(s) accepted and not handled\n",
		is.IID, is.Title, st.Accepted-st.Handled-st.DeadLettered)
	return mr, is.ID, nil
}

// registerHook adds the project hook, with its secret, for url.
func (s *scene) registerHook(url string) error {
	hook, _, err := s.admin.Hooks.Add(s.ctx, s.pid, hookOptions(url))
	if err == nil {
		err = s.srv.SetHookToken(hook.ID, hookSecret)
	}
	if err != nil {
		return fmt.Errorf("registering the hook: %w", err)
	}
	s.hookID = hook.ID
	fmt.Fprintf(s.out, "hook %d registered for %s; the bot's queue is in %s\n", hook.ID, url, s.dir)
	return nil
}

// whileDown makes changes while the bot is down: the server's deliveries
// fail, and it never sends them again.
func (s *scene) whileDown() (login, slow int, err error) {
	is, _, err := s.user.Issues.Create(s.ctx, s.pid, &collab.CreateIssueOptions{Title: "Login fails"})
	if err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(s.out, "while the bot is down: alice opened #%d %q\n", is.IID, is.Title)
	sl, _, err := s.admin.Issues.GetByIID(s.ctx, s.pid, 2)
	if err != nil {
		return 0, 0, err
	}
	if _, _, err := s.user.Notes.CreateIssueNote(s.ctx, s.pid, sl.ID, &collab.CreateNoteOptions{Body: "/close"}); err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(s.out, "while the bot is down: alice commented /close on #%d\n", sl.IID)
	build := s.srv.Seed.Build(s.project, collabtest.BuildSpec{Name: "rspec", Stage: "test", Ref: "fix-save"})
	s.srv.SetBuildStatus(build.ID, "running")
	s.srv.SetBuildStatus(build.ID, "failed")
	fmt.Fprintf(s.out, "while the bot is down: build rspec (#%d) on fix-save failed\n", build.ID)
	return is.ID, sl.ID, s.srv.WaitIdle(s.ctx)
}

// restart starts the bot again on the same queue: it handles what was
// pending, and catches up on what it missed, stored behind it.
func (s *scene) restart() (webhook.Stats, error) {
	q, err := diskqueue.Open(s.dir, diskqueue.Options{})
	if err != nil {
		return webhook.Stats{}, err
	}
	defer q.Close()
	r, err := listen(s.ctx, s.b, "127.0.0.1:0", hookSecret, q)
	if err != nil {
		return webhook.Stats{}, err
	}
	defer r.close()
	if _, _, err := s.admin.Hooks.Update(s.ctx, s.pid, s.hookID, hookOptions(r.url)); err != nil {
		return webhook.Stats{}, fmt.Errorf("moving the hook: %w", err)
	}
	cst, err := catchup.Run(s.ctx, r.h, s.admin, s.catchUp)
	if err != nil {
		return webhook.Stats{}, err
	}
	r.run()
	fmt.Fprintf(s.out, "the bot restarted; catch-up found %d missed event(s) and skipped %d it already had\n",
		total(cst.Admitted), cst.Duplicates)
	err = errors.Join(s.waitReports(4, "the pending and missed events"), s.srv.WaitIdle(s.ctx), r.h.WaitIdle(s.ctx))
	if err != nil {
		return webhook.Stats{}, errors.Join(err, r.stop())
	}
	err = r.stop()
	return r.h.Stats(), err
}

// firstAct is the scenario while the bot runs: two issues, a /close comment
// and a merge request.
func firstAct(ctx context.Context, out io.Writer, srv *collabtest.Server, user *collab.Client, pid int, waitReports func(int, string) error) (mrID int, err error) {
	// The first delivery is sent twice, as the server does after a timeout.
	srv.InjectDeliveryFault(collabtest.DeliveryFault{Duplicate: true})
	crash, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash on save"})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "alice opened #%d %q (its delivery is sent twice)\n", crash.IID, crash.Title)
	if err := waitReports(1, "a new issue"); err != nil {
		return 0, err
	}
	slow, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Search is slow", Labels: collab.LabelNames{"performance"}})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "alice opened #%d %q with a label\n", slow.IID, slow.Title)
	if err := waitReports(1, "a labelled issue"); err != nil {
		return 0, err
	}
	if _, _, err := user.Notes.CreateIssueNote(ctx, pid, crash.ID, &collab.CreateNoteOptions{Body: "/close"}); err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "alice commented /close on #%d\n", crash.IID)
	if err := waitReports(1, "a /close comment"); err != nil {
		return 0, err
	}
	if _, err := srv.Push(pid, "fix-save", collabtest.PushCommit{Message: "Save atomically", AuthorName: "Alice",
		AuthorEmail: "alice@example.com", Modified: []string{"save.go"}}); err != nil {
		return 0, err
	}
	mr, _, err := user.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "fix-save",
		TargetBranch: "master", Title: "Save atomically"})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "alice opened !%d %q\n", mr.IID, mr.Title)
	return mr.ID, srv.WaitIdle(ctx)
}

// nothingLost checks through the API that the bot acted on every event,
// those pending at the stop and those sent while it was down.
func nothingLost(ctx context.Context, out io.Writer, c *collab.Client, pid int, st webhook.Stats, triaged []int, closed, mrID int) error {
	var lost []string
	for _, id := range triaged {
		is, _, err := c.Issues.Get(ctx, pid, id)
		if err != nil {
			return err
		}
		if !slices.Contains(is.Labels, "needs-triage") {
			lost = append(lost, fmt.Sprintf("#%d was not triaged", is.IID))
		}
	}
	is, _, err := c.Issues.Get(ctx, pid, closed)
	if err != nil {
		return err
	}
	if is.State != collab.IssueClosed {
		lost = append(lost, fmt.Sprintf("#%d was not closed", is.IID))
	}
	noted := false
	for n, err := range c.Notes.AllMergeRequestNotes(ctx, pid, mrID, nil) {
		if err != nil {
			return err
		}
		noted = noted || strings.HasPrefix(n.Body, "Build rspec")
	}
	if !noted {
		lost = append(lost, "the failed build was not noted on the merge request")
	}
	if st.DeadLettered > 0 || st.Dropped > 0 {
		lost = append(lost, fmt.Sprintf("%d dropped, %d dead-lettered", st.Dropped, st.DeadLettered))
	}
	if len(lost) > 0 {
		return fmt.Errorf("events were lost: %s", strings.Join(lost, "; "))
	}
	fmt.Fprintf(out, "nothing was lost: after the restart the bot handled %d event(s), %d dropped, %d dead-lettered\n",
		st.Handled, st.Dropped, st.DeadLettered)
	return nil
}

func total(m map[webhook.Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// hookOptions registers a hook at url for the events the bot reacts to.
func hookOptions(url string) *collab.AddHookOptions {
	return &collab.AddHookOptions{URL: url, PushEvents: collab.Ptr(false),
		IssuesEvents: collab.Ptr(true), NoteEvents: collab.Ptr(true), BuildEvents: collab.Ptr(true)}
}

// serveLive runs the bot against a real server until ctx ends, and removes
// its hook when done.
func serveLive(ctx context.Context, w io.Writer, base, token, project string) error {
	out := &lockedWriter{w: w}
	m, err := newMetrics()
	if err != nil {
		return err
	}
	defer m.Shutdown(context.WithoutCancel(ctx))
	c, err := collab.NewClient(base, collab.WithPrivateToken(token), collab.WithObserver(m.Observer))
	if err != nil {
		return err
	}
	pid := projectID(project)
	addr := os.Getenv("COLLAB_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	dir := os.Getenv("WEBHOOK_BOT_QUEUE")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("no queue directory: set WEBHOOK_BOT_QUEUE: %w", err)
		}
		dir = filepath.Join(cache, "collab-webhook-bot")
	}
	q, err := diskqueue.Open(dir, diskqueue.Options{})
	if err != nil {
		return err
	}
	defer q.Close()
	b := &bot{c: c, self: os.Getenv("COLLAB_BOT_USER"), label: "needs-triage", report: func(s string) { fmt.Fprintln(out, "bot:", s) }, metrics: m}
	r, err := listen(ctx, b, addr, os.Getenv("WEBHOOK_SECRET"), q)
	if err != nil {
		return err
	}
	defer r.close()
	hook, _, err := c.Hooks.Add(ctx, pid, hookOptions(r.url))
	if err != nil {
		return fmt.Errorf("registering the hook: %w", err)
	}
	fmt.Fprintf(out, "hook %d registered for %s (health on /healthz, metrics on /metrics); queue in %s; interrupt to stop\n", hook.ID, r.url, dir)
	// What changed while the bot was not running reaches it too.
	cst, err := catchup.Run(ctx, r.h, c, catchup.Options{Projects: []catchup.Project{catchup.Path(project)}})
	if err != nil {
		fmt.Fprintln(out, "catching up:", err)
	} else if n := total(cst.Admitted); n > 0 {
		fmt.Fprintf(out, "catch-up found %d missed event(s)\n", n)
	}
	r.run()
	<-ctx.Done()
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := c.Hooks.Delete(cleanup, pid, hook.ID); err != nil {
		fmt.Fprintln(out, "removing the hook:", err)
	}
	return r.stop()
}

// lockedWriter serialises writes from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// projectID returns a project given as a numeric id or a "namespace/name"
// path in the form the client's methods take: an int for an id, else the path.
func projectID(s string) any {
	if id, err := strconv.Atoi(s); err == nil {
		return id
	}
	return s
}
