// Command webhook-bot is a bot driven by webhooks: it listens on a loopback
// port, registers a project hook, and reacts to events as they arrive. A new
// issue without labels gets a label and a comment; a "/close" comment closes
// its issue; a failed build gets a note on the merge request of its branch.
//
// With no COLLAB_URL and COLLAB_TOKEN it starts the embedded fake server,
// plays a short scenario against it (with one delivery sent twice on
// purpose, to show duplicates are suppressed), prints what happened and
// exits. With them (and COLLAB_PROJECT) it serves a real server until
// interrupted; that server must be able to reach the loopback address
// (COLLAB_HOOK_ADDR, default 127.0.0.1:0), and the hook's secret token, set
// in the server's web UI, goes in WEBHOOK_SECRET. COLLAB_BOT_USER names the
// token's user, whose own comments are never taken as commands.
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
	"strconv"
	"sync"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
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
	close   func()
}

// listen starts the bot's handler and an HTTP server on addr.
func listen(ctx context.Context, b *bot, addr, secret string) (*receiver, error) {
	h, err := webhook.NewHandler(b.options(secret))
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
	r := &receiver{h: h, url: "http://" + ln.Addr().String() + "/hook", stopped: make(chan error, 1)}
	served := make(chan struct{})
	go func() { r.stopped <- h.Run(runCtx) }()
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

func scenario(ctx context.Context, w io.Writer) error {
	out := &lockedWriter{w: w} // the bot's workers print too
	srv := collabtest.NewServer()
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

	reports := make(chan string, 16)
	b := &bot{c: admin, self: "root", label: "needs-triage", report: func(s string) {
		fmt.Fprintln(out, "bot:", s)
		reports <- s
	}}
	const secret = "webhook-bot-secret"
	r, err := listen(ctx, b, "127.0.0.1:0", secret)
	if err != nil {
		return err
	}
	defer r.close()
	hook, _, err := admin.Hooks.Add(ctx, pid, hookOptions(r.url))
	if err != nil {
		return fmt.Errorf("registering the hook: %w", err)
	}
	if err := srv.SetHookToken(hook.ID, secret); err != nil {
		return err
	}
	fmt.Fprintf(out, "hook %d registered for %s\n", hook.ID, r.url)

	// waitReport waits for the bot's next reaction, at most until ctx ends.
	waitReport := func(what string) error {
		select {
		case <-reports:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("no reaction to %s: %w", what, ctx.Err())
		}
	}

	// The first delivery is sent twice, as the server does after a timeout.
	srv.InjectDeliveryFault(collabtest.DeliveryFault{Duplicate: true})
	crash, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash on save"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "alice opened #%d %q (its delivery is sent twice)\n", crash.IID, crash.Title)
	if err := waitReport("a new issue"); err != nil {
		return err
	}
	slow, _, err := user.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Search is slow", Labels: collab.Labels{"performance"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "alice opened #%d %q with a label\n", slow.IID, slow.Title)
	if err := waitReport("a labelled issue"); err != nil {
		return err
	}
	if _, _, err := user.Notes.CreateIssueNote(ctx, pid, crash.ID, "/close"); err != nil {
		return err
	}
	fmt.Fprintf(out, "alice commented /close on #%d\n", crash.IID)
	if err := waitReport("a /close comment"); err != nil {
		return err
	}

	if _, err := srv.Push(pid, "fix-save", collabtest.PushCommit{Message: "Save atomically", AuthorName: "Alice",
		AuthorEmail: "alice@example.com", Modified: []string{"save.go"}}); err != nil {
		return err
	}
	mr, _, err := user.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "fix-save",
		TargetBranch: "master", Title: "Save atomically"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "alice opened !%d %q\n", mr.IID, mr.Title)
	build := srv.AddBuild(pid, collabtest.BuildSpec{Name: "rspec", Stage: "test", Ref: "fix-save"})
	srv.SetBuildStatus(build, "running")
	srv.SetBuildStatus(build, "failed")
	fmt.Fprintf(out, "build rspec (#%d) on fix-save failed\n", build)
	if err := waitReport("a failed build"); err != nil {
		return err
	}

	if err := srv.WaitIdle(ctx); err != nil {
		return err
	}
	if err := r.stop(); err != nil {
		return err
	}
	final, _, err := admin.Issues.Get(ctx, pid, crash.ID)
	if err != nil {
		return err
	}
	st := r.h.Stats()
	fmt.Fprintf(out, "#%d is %s with labels %v; %d deliveries received, %d handled, %d duplicate suppressed, %d dropped, %d dead-lettered\n",
		final.IID, final.State, final.Labels, st.Received, st.Handled, st.Duplicates, st.Dropped, st.DeadLettered)
	if st.DeadLettered > 0 || st.Dropped > 0 {
		return errors.New("some events were not handled")
	}
	return nil
}

// hookOptions registers a hook at url for the events the bot reacts to.
func hookOptions(url string) *collab.HookOptions {
	return &collab.HookOptions{URL: url, PushEvents: collab.Ptr(false),
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
	var pid any = project
	if id, err := strconv.Atoi(project); err == nil {
		pid = id
	}
	addr := os.Getenv("COLLAB_HOOK_ADDR")
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	b := &bot{c: c, self: os.Getenv("COLLAB_BOT_USER"), label: "needs-triage", report: func(s string) { fmt.Fprintln(out, "bot:", s) }}
	r, err := listen(ctx, b, addr, os.Getenv("WEBHOOK_SECRET"))
	if err != nil {
		return err
	}
	defer r.close()
	hook, _, err := c.Hooks.Add(ctx, pid, hookOptions(r.url))
	if err != nil {
		return fmt.Errorf("registering the hook: %w", err)
	}
	fmt.Fprintf(out, "hook %d registered for %s; interrupt to stop\n", hook.ID, r.url)
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
