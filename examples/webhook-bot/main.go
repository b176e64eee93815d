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
	"strings"
	"sync"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/exampleenv"
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
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
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

func scenario(ctx context.Context, w io.Writer) error {
	out := &lockedWriter{w: w} // the bot's workers print too
	srv, err := collabtest.NewServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintln(out, "using the embedded fake server at", srv.URL)
	alice := srv.AddUser("alice", false)
	pid := srv.AddProject(srv.AdminID, "Webshop", 10)
	srv.AddMember(pid, alice.ID, 30)
	admin, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		return err
	}
	user, err := collab.NewClient(srv.URL, collab.WithPrivateToken(alice.Token))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "webhook-bot-queue-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	reports := make(chan string, 16)
	b := &bot{c: admin, self: "root", label: "needs-triage", report: func(s string) {
		fmt.Fprintln(out, "bot:", s)
		reports <- s
	}}
	// waitReports waits for the bot's next n reactions, at most until ctx ends.
	waitReports := func(n int, what string) error {
		for range n {
			select {
			case <-reports:
			case <-ctx.Done():
				return fmt.Errorf("no reaction to %s: %w", what, ctx.Err())
			}
		}
		return nil
	}
	const secret = "webhook-bot-secret"
	catchUp := catchup.Options{Projects: catchup.IDs(pid)}

	// The bot starts: its queue lives on disk, and a first catch-up records
	// where the project stands.
	q, err := diskqueue.Open(dir, diskqueue.Options{})
	if err != nil {
		return err
	}
	r, err := listen(ctx, b, "127.0.0.1:0", secret, q)
	if err != nil {
		return errors.Join(err, q.Close())
	}
	if _, err := catchup.Run(ctx, r.h, admin, catchUp); err != nil {
		r.close()
		return errors.Join(err, q.Close())
	}
	r.run()
	hook, _, err := admin.Hooks.Add(ctx, pid, hookOptions(r.url))
	if err == nil {
		err = srv.SetHookToken(hook.ID, secret)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("registering the hook: %w", err), r.stop(), q.Close())
	}
	fmt.Fprintf(out, "hook %d registered for %s; the bot's queue is in %s\n", hook.ID, r.url, dir)
	mr, err := firstAct(ctx, out, srv, user, pid, waitReports)
	if err != nil {
		return errors.Join(err, r.stop(), q.Close())
	}

	// The bot is stopped in the middle: one event accepted and not handled.
	if err := r.h.WaitIdle(ctx); err != nil {
		return errors.Join(err, r.stop(), q.Close())
	}
	if err := r.stopWorkers(); err != nil {
		return errors.Join(err, q.Close())
	}
	export, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Export is empty"})
	if err != nil {
		return errors.Join(err, q.Close())
	}
	if err := srv.WaitIdle(ctx); err != nil {
		return errors.Join(err, q.Close())
	}
	r.close()
	if err := q.Close(); err != nil {
		return err
	}
	st := r.h.Stats()
	fmt.Fprintf(out, "alice opened #%d %q; the bot stopped with %d event(s) accepted and not handled\n",
		export.IID, export.Title, st.Accepted-st.Handled-st.DeadLettered)

	// While it is down, the server's deliveries fail, and it never sends
	// them again.
	login, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Login fails"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "while the bot is down: alice opened #%d %q\n", login.IID, login.Title)
	slow, _, err := admin.Issues.GetByIID(ctx, pid, 2)
	if err != nil {
		return err
	}
	if _, _, err := user.Notes.CreateIssueNote(ctx, pid, slow.ID, "/close"); err != nil {
		return err
	}
	fmt.Fprintf(out, "while the bot is down: alice commented /close on #%d\n", slow.IID)
	build := srv.AddBuild(pid, collabtest.BuildSpec{Name: "rspec", Stage: "test", Ref: "fix-save"})
	srv.SetBuildStatus(build, "running")
	srv.SetBuildStatus(build, "failed")
	fmt.Fprintf(out, "while the bot is down: build rspec (#%d) on fix-save failed\n", build)
	if err := srv.WaitIdle(ctx); err != nil {
		return err
	}

	// The bot restarts on the same queue: it handles what was pending, and
	// catches up on what it missed.
	if q, err = diskqueue.Open(dir, diskqueue.Options{}); err != nil {
		return err
	}
	defer q.Close()
	if r, err = listen(ctx, b, "127.0.0.1:0", secret, q); err != nil {
		return err
	}
	defer r.close()
	if _, _, err := admin.Hooks.Update(ctx, pid, hook.ID, hookOptions(r.url)); err != nil {
		return fmt.Errorf("moving the hook: %w", err)
	}
	// Catch-up stores what was missed behind what was pending; then the
	// workers handle both, in that order.
	cst, err := catchup.Run(ctx, r.h, admin, catchUp)
	if err != nil {
		return err
	}
	r.run()
	fmt.Fprintf(out, "the bot restarted; catch-up found %d missed event(s) and skipped %d it already had\n",
		total(cst.Admitted), cst.Duplicates)
	if err := waitReports(4, "the pending and missed events"); err != nil {
		return err
	}
	if err := srv.WaitIdle(ctx); err != nil {
		return err
	}
	if err := r.h.WaitIdle(ctx); err != nil {
		return err
	}
	if err := r.stop(); err != nil {
		return err
	}
	return nothingLost(ctx, out, admin, pid, r.h.Stats(), []int{export.ID, login.ID}, slow.ID, mr)
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
	if _, _, err := user.Notes.CreateIssueNote(ctx, pid, crash.ID, "/close"); err != nil {
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
	if is.State != "closed" {
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
	c, err := collab.NewClient(base, collab.WithPrivateToken(token))
	if err != nil {
		return err
	}
	pid := exampleenv.ProjectID(project)
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
	b := &bot{c: c, self: os.Getenv("COLLAB_BOT_USER"), label: "needs-triage", report: func(s string) { fmt.Fprintln(out, "bot:", s) }}
	r, err := listen(ctx, b, addr, os.Getenv("WEBHOOK_SECRET"), q)
	if err != nil {
		return err
	}
	defer r.close()
	hook, _, err := c.Hooks.Add(ctx, pid, hookOptions(r.url))
	if err != nil {
		return fmt.Errorf("registering the hook: %w", err)
	}
	fmt.Fprintf(out, "hook %d registered for %s; queue in %s; interrupt to stop\n", hook.ID, r.url, dir)
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
