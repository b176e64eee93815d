package bot

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs the bot of the kill tests when the test binary is started
// as that bot's process (see killWorld.start), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("BOT_TEST_CHILD") != "" {
		if err := runChild(); err != nil {
			fmt.Fprintln(os.Stderr, "bot process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is the bot process: on "/triage" it labels the issue "triaged",
// then replies. It keeps its queue in BOT_TEST_DIR, has one worker, so that
// one callback at a time is under way, prints its address, and serves
// /idle, which answers once the bot is idle. It runs until it is killed.
func runChild() error {
	c, err := collab.NewClient(os.Getenv("BOT_TEST_URL"), collab.WithPrivateToken(os.Getenv("BOT_TEST_TOKEN")),
		collab.WithoutRetries())
	if err != nil {
		return err
	}
	b, err := New(Options{Client: c, Dir: os.Getenv("BOT_TEST_DIR"), Webhook: webhook.Options{Workers: 1}})
	if err != nil {
		return err
	}
	b.Command("triage", triage)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	mux := http.NewServeMux()
	mux.Handle("/", b)
	mux.HandleFunc("/idle", func(w http.ResponseWriter, r *http.Request) {
		if b.WaitIdle(r.Context()) != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	go func() { _ = http.Serve(ln, mux) }()
	return b.Run(context.Background())
}

// triage is the command of the kill tests: a label, then a reply.
func triage(ctx context.Context, n *Note, _ Command) error {
	if err := n.AddLabels(ctx, "triaged"); err != nil {
		return err
	}
	return n.Comment(ctx, "Triaged.")
}

// killWorld runs the bot as a process of its own, talking to the fake
// through a proxy that holds the answer to one kind of request once the
// fake has made the change, until the process dies.
type killWorld struct {
	srv      *collabtest.Server
	project  *collab.Project
	pid, bob int // project.ID, bobUser.ID
	bobUser  collabtest.User
	dir      string
	api      string                  // the proxy's URL, the bot's server
	held     chan struct{}           // a request the proxy holds
	bot      atomic.Pointer[url.URL] // the running bot process, nil when down
}

func newKillWorld(t *testing.T, hold func(*http.Request) bool) *killWorld {
	srv := collabtest.NewTestServer(t)
	bob := srv.Seed.User("bob")
	project := srv.Seed.Project(bob, "app", collab.PublicVisibility)
	w := &killWorld{srv: srv, project: project, pid: project.ID, bob: bob.ID, bobUser: bob, dir: t.TempDir(),
		held: make(chan struct{})}
	upstream, err := url.Parse(srv.URL)
	require.NoError(t, err)
	p := httputil.NewSingleHostReverseProxy(upstream)
	p.ErrorLog = stdlog.New(io.Discard, "", 0)
	p.ModifyResponse = func(resp *http.Response) error {
		ctx := resp.Request.Context()
		if resp.StatusCode >= 300 || !hold(resp.Request) {
			return nil
		}
		select { // the change is made; the bot never hears of it
		case w.held <- struct{}{}:
		case <-ctx.Done():
		}
		<-ctx.Done()
		return ctx.Err()
	}
	api := httptest.NewServer(p)
	t.Cleanup(api.Close)
	w.api = api.URL
	srv.AddReceiver(w.pid).Set(http.HandlerFunc(w.forward))
	return w
}

// forward hands a delivery to the bot process, or answers 503 while it is
// down, which the fake never sends again.
func (w *killWorld) forward(rw http.ResponseWriter, r *http.Request) {
	u := w.bot.Load()
	if u == nil {
		rw.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = stdlog.New(io.Discard, "", 0)
	p.ServeHTTP(rw, r)
}

// start starts a bot process on the world's queue and waits for its
// address.
func (w *killWorld) start(t *testing.T) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BOT_TEST_CHILD=1", "BOT_TEST_URL="+w.api,
		"BOT_TEST_TOKEN="+w.srv.AdminToken, "BOT_TEST_DIR="+w.dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { w.kill(cmd) })
	addr, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the bot process prints its address")
	w.bot.Store(&url.URL{Scheme: "http", Host: strings.TrimSpace(addr)})
	return cmd
}

// kill takes the bot down and SIGKILLs its process.
func (w *killWorld) kill(cmd *exec.Cmd) {
	w.bot.Store(nil)
	if cmd.ProcessState == nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

// WaitIdle waits until the bot process has handled what it stored.
func (w *killWorld) WaitIdle(ctx context.Context) error {
	u := w.bot.Load()
	if u == nil {
		return errors.New("the bot is down")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String()+"/idle", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// run starts the bot, calls act, and kills the bot each time the proxy
// holds a request, once the fake has delivered everything, then starts it
// again on the same queue; it stops the bot when it settles, and returns
// how many times it was killed. A bot killed more than limit times fails
// the test: it makes the held change on every start.
func (w *killWorld) run(t *testing.T, limit int, act func()) (kills int) {
	for {
		require.LessOrEqual(t, kills, limit, "the bot makes the held change again on each start")
		cmd := w.start(t)
		act()
		act = func() {}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		settled := make(chan error, 1)
		go func() { settled <- w.srv.Settle(ctx, w) }()
		select {
		case <-w.held:
			cancel()
			<-settled
			wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
			require.NoError(t, w.srv.WaitIdle(wctx), "the fake delivers all before the kill")
			wcancel()
			w.kill(cmd)
			kills++
		case err := <-settled:
			cancel()
			require.NoError(t, err)
			w.kill(cmd)
			return kills
		}
	}
}

// commands opens n issues, each with a "/triage" comment by bob.
func (w *killWorld) commands(n int) (issues []int) {
	for i := range n {
		is := w.srv.Seed.Issue(w.project, w.bobUser, fmt.Sprintf("Crash %d", i))
		w.srv.Seed.IssueNote(is, w.bobUser, "/triage")
		issues = append(issues, is.ID)
	}
	return issues
}

var (
	notesPath = regexp.MustCompile(`/issues/\d+/notes$`)
	issuePath = regexp.MustCompile(`/issues/\d+$`)
)

// assertTriagedOnce checks that each issue has one reply and the label, and
// that the log holds one reply and one label write per issue.
func (w *killWorld) assertTriagedOnce(t *testing.T, issues []int) {
	c, err := collab.NewClient(w.srv.URL, collab.WithPrivateToken(w.srv.AdminToken))
	require.NoError(t, err)
	ctx := context.Background()
	reqs := requests(w.srv)
	assert.Equal(t, len(issues), reqs["POST notes"], "one reply posted per command")
	assert.Equal(t, len(issues), reqs["PUT issue"], "one label write per command")
	for _, id := range issues {
		notes, _, err := c.Notes.ListIssueNotes(ctx, w.pid, id, nil)
		require.NoError(t, err)
		replies := 0
		for _, n := range notes {
			if strings.HasPrefix(n.Body, "Triaged.") {
				replies++
			}
		}
		is, _, err := c.Issues.Get(ctx, w.pid, id)
		require.NoError(t, err)
		assert.Equal(t, 1, replies, "issue %d has one reply", id)
		assert.Equal(t, []string{"triaged"}, is.Labels, "issue %d", id)
	}
}

// TestKilled: the bot process is SIGKILLed after each reply is made and
// before its delivery is acknowledged; or after the label is written and
// before the reply. Restarted on the same disk queue, it retries each
// delivery, finds what the attempt before made, and makes the rest: each of
// 20 commands has one reply and one label write.
func TestKilled(t *testing.T) {
	for name, hold := range map[string]func(*http.Request) bool{
		"after the reply":  func(r *http.Request) bool { return r.Method == http.MethodPost && notesPath.MatchString(r.URL.Path) },
		"before the reply": func(r *http.Request) bool { return r.Method == http.MethodPut && issuePath.MatchString(r.URL.Path) },
	} {
		t.Run(name, func(t *testing.T) {
			w := newKillWorld(t, hold)
			var issues []int
			kills := w.run(t, 25, func() { issues = w.commands(20) })
			assert.Equal(t, 20, kills, "killed once per command")
			w.assertTriagedOnce(t, issues)
		})
	}
}
