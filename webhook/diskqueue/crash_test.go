package diskqueue

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// The test binary runs as a receiver when this variable is set; see
// receiverChild.
const childEnv = "WEBHOOK_TEST_RECEIVER"

// receiverChild serves a Handler on a DiskQueue in $WEBHOOK_TEST_RECEIVER,
// prints its address, and appends "<run> <key>" to $HANDLED_LOG, synced,
// for each event its slow callback handled. With DRAIN=1 it exits once its
// queue is idle; otherwise it runs until killed.
func receiverChild() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "receiver:", err); return 1 }
	q, err := Open(os.Getenv(childEnv), Options{})
	if err != nil {
		return fail(err)
	}
	defer q.Close()
	log, err := os.OpenFile(os.Getenv("HANDLED_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fail(err)
	}
	defer log.Close()
	var mu sync.Mutex
	run := os.Getenv("RUN")
	h, err := webhook.NewHandler(webhook.Options{Queue: q, Workers: 4, OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error {
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if _, err := fmt.Fprintf(log, "%s %s\n", run, webhook.DeliveryFrom(ctx).StateKey); err != nil {
			return err
		}
		return log.Sync()
	}})
	if err != nil {
		return fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Println("ADDR", ln.Addr())
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if os.Getenv("DRAIN") == "1" {
		go func() {
			if h.WaitIdle(ctx) == nil {
				stop()
			}
		}()
	}
	if err := h.Run(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// startReceiver starts the test binary as a receiver and returns it with its
// address.
func startReceiver(t *testing.T, qdir, handledLog, run string, drain bool) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+qdir, "HANDLED_LOG="+handledLog, "RUN="+run)
	if drain {
		cmd.Env = append(cmd.Env, "DRAIN=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the receiver did not start")
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	require.True(t, ok, "unexpected first line %q", line)
	return cmd, addr
}

// issueBody is the spec's issue payload with another id.
func issueBody(template []byte, id int) []byte {
	return bytes.Replace(template, []byte(`"id":4417`), []byte(fmt.Sprintf(`"id":%d`, id)), 1)
}

func issueKey(id int) string { return fmt.Sprintf("issue/%d/2016-06-21T09:14:07Z", id) }

// readHandled returns, per run, how many times each key was handled.
func readHandled(t *testing.T, path string) map[string]map[string]int {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]map[string]int{"1": {}, "2": {}}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		run, key, ok := strings.Cut(line, " ")
		require.True(t, ok, "torn line %q", line)
		out[run][key]++
	}
	return out
}

// pendingKeys reads the keys still in the queue file: the deliveries not
// acked.
func pendingKeys(t *testing.T, qdir string) map[string]bool {
	q := openDisk(t, qdir, Options{})
	defer q.Close()
	keys := map[string]bool{}
	for _, it := range q.items {
		if !it.dead {
			d, _, err := q.readFields(it)
			require.NoError(t, err)
			keys[d.StateKey] = true
		}
	}
	return keys
}

// TestCrashKeepsAnsweredEvents: a receiver answers 600 deliveries, is killed
// with SIGKILL while its slow callbacks run, and is started again on the
// same queue. Every answered event is handled at least once, and none that
// was handled and acked before the kill is handled again.
func TestCrashKeepsAnsweredEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts receiver processes")
	}
	const n = 600
	dir := t.TempDir()
	qdir, handledLog := filepath.Join(dir, "queue"), filepath.Join(dir, "handled.log")

	first, addr := startReceiver(t, qdir, handledLog, "1", false)
	s := newSender(t, "http://"+addr+"/hook")
	s.deliverAll(n, 32, nil)
	require.Zero(t, s.finals, "no final answer")
	answered := s.answered
	require.Equal(t, n, answered)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()

	pending := pendingKeys(t, qdir)
	require.NotEmpty(t, pending, "the kill came after everything was handled: nothing was tested")

	second, _ := startReceiver(t, qdir, handledLog, "2", true)
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the restarted receiver did not drain its queue")
	}

	handled := readHandled(t, handledLog)
	before, after := handled["1"], handled["2"]
	twice := 0
	for id := 1; id <= n; id++ {
		k := issueKey(id)
		assert.Positive(t, before[k]+after[k], "answered %s never handled", k)
		if before[k] > 0 && after[k] > 0 {
			twice++
			assert.True(t, pending[k], "%s was acked before the kill and handled again", k)
		}
	}
	assert.Empty(t, pendingKeys(t, qdir), "all acked after the restart")
	t.Logf("answered 200 %d; asked again %d; final answers %d; handled before the kill %d; not acked at the kill %d; handled after the restart %d; handled in both runs %d (each unacked at the kill); lost 0",
		answered, s.asked, s.finals, len(before), len(pending), len(after), twice)
}
