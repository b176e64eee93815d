package redisqueue_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/redis/go-redis/v9"
)

// The receiver a test runs as a child process: a webhook.Handler on a
// shared Redis queue, whose callback appends each handled delivery's key to
// one log shared by all receivers. Appends of one short line with O_APPEND
// do not interleave, so the log is the order of handling.
const (
	envRedis = "REDISQUEUE_TEST_RECEIVER_REDIS"
	envLog   = "REDISQUEUE_TEST_RECEIVER_LOG"
	envName  = "REDISQUEUE_TEST_RECEIVER_NAME"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(envRedis); addr != "" {
		os.Exit(receiverMain(addr, os.Getenv(envLog), os.Getenv(envName)))
	}
	// The client logs each failed dial; TestRedisDown fails many on purpose.
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func receiverMain(addr, logPath, name string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "receiver:", err); return 1 }
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	// Errors go to the test's output; a store error is tried again soon, so
	// that a busy machine does not stretch the run.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{Consumer: name, LeaseTimeout: time.Second, PollInterval: 20 * time.Millisecond,
		Logger: logger})
	if err != nil {
		return fail(err)
	}
	h, err := webhook.NewHandler(webhook.Options{Queue: q, Workers: 4, Logger: logger, RetryMin: 20 * time.Millisecond,
		RetryMax: 500 * time.Millisecond, OnDelivery: func(_ context.Context, d *webhook.Delivery) error {
			time.Sleep(3 * time.Millisecond) // work in flight when the kill comes
			if _, err := log.WriteString(d.StateKey + " " + name + "\n"); err != nil {
				return err
			}
			return log.Sync()
		}})
	if err != nil {
		return fail(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	fmt.Println(l.Addr().String())
	return fail(webhook.Serve(ctx, l, h))
}

// receiver is a running child receiver.
type receiver struct {
	cmd  *exec.Cmd
	addr string
}

func startReceiver(t *testing.T, redisAddr, logPath, name string) *receiver {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRedis+"="+redisAddr, envLog+"="+logPath, envName+"="+name)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("receiver %s did not start: %v", name, err)
	}
	return &receiver{cmd: cmd, addr: strings.TrimSpace(addr)}
}

// issueBody is the Issue Hook body of the n-th update of an issue.
func issueBody(issue, n int) []byte {
	updated := time.Date(2016, 6, 21, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	return fmt.Appendf(nil, `{"object_kind":"issue","object_attributes":{"id":%d,"iid":%d,"title":"t","state":"opened",`+
		`"updated_at":%q,"action":"update"}}`, issue, issue, updated.Format("2006-01-02 15:04:05 MST"))
}

func issueKey(issue, n int) string {
	updated := time.Date(2016, 6, 21, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second)
	return fmt.Sprintf("issue/%d/%s", issue, updated.Format(time.RFC3339))
}

// deliveries is the client send posts with: it keeps many connections to
// a receiver open, for the benchmark's parallel posts.
var deliveries = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}

// send posts an issue delivery to the receiver at addr, and expects a 200.
func send(addr string, body []byte) error {
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	resp, err := deliveries.Do(req)
	if err != nil {
		return fmt.Errorf("delivery: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // so that the connection is used again
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("delivery answered %d", resp.StatusCode)
	}
	return nil
}

// handledLog reads the shared log: each key's receivers, and the order of
// keys.
func handledLog(t *testing.T, path string) (by map[string][]string, order []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	by = map[string][]string{}
	for line := range strings.Lines(string(b)) {
		key, name, _ := strings.Cut(strings.TrimSpace(line), " ")
		by[key] = append(by[key], name)
		order = append(order, key)
	}
	return by, order
}

// waitHandled waits until every key in want was handled at least once.
func waitHandled(t *testing.T, path string, want []string) map[string][]string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		by, _ := handledLog(t, path)
		missing := 0
		for _, k := range want {
			if len(by[k]) == 0 {
				missing++
			}
		}
		if missing == 0 {
			return by
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never handled", missing, len(want))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const (
	issues  = 50
	updates = 10 // per issue: 500 events
)

// TestTwoReceivers: two receivers share one queue; the deliveries, sent to
// both in turn, are each handled exactly once, spread over both, with the
// updates of each issue in order.
func TestTwoReceivers(t *testing.T) {
	rdb := startRedis(t)
	addr := rdb.Options().Addr
	logPath := t.TempDir() + "/handled.log"
	rs := []*receiver{startReceiver(t, addr, logPath, "a"), startReceiver(t, addr, logPath, "b")}
	var want []string
	sendAll(t, func(i int) string { return rs[i%2].addr }, &want, 0, updates)
	waitHandled(t, logPath, want)
	time.Sleep(300 * time.Millisecond) // a late repeat would show now

	by, order := handledLog(t, logPath)
	perReceiver := map[string]int{}
	for _, k := range want {
		if len(by[k]) != 1 {
			t.Errorf("%s handled %d times, want once", k, len(by[k]))
		}
		perReceiver[by[k][0]]++
	}
	if len(order) != len(want) {
		t.Errorf("%d handlings of %d events", len(order), len(want))
	}
	if perReceiver["a"] == 0 || perReceiver["b"] == 0 {
		t.Errorf("handled per receiver = %v, want work on both", perReceiver)
	}
	checkOrder(t, order)
	t.Logf("%d events, handled once each: %v", len(want), perReceiver)
}

// TestTwoReceiversKill: one receiver is killed with SIGKILL mid-stream,
// holding leases; the other takes them over, and every event is handled at
// least once.
func TestTwoReceiversKill(t *testing.T) {
	rdb := startRedis(t)
	addr := rdb.Options().Addr
	logPath := t.TempDir() + "/handled.log"
	a, b := startReceiver(t, addr, logPath, "a"), startReceiver(t, addr, logPath, "b")
	var want []string
	sendAll(t, func(i int) string { return []string{a.addr, b.addr}[i%2] }, &want, 0, updates/2)

	// Kill a while it holds work: some of its events are not handled yet.
	for {
		by, _ := handledLog(t, logPath)
		if len(by) > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	byKill, _ := handledLog(t, logPath)
	pendingAtKill := len(want) - len(byKill)

	sendAll(t, func(int) string { return b.addr }, &want, updates/2, updates)
	by := waitHandled(t, logPath, want)
	twice := 0
	for _, k := range want {
		if len(by[k]) > 1 {
			twice++
		}
	}
	// A callback logs its event before its Ack reaches Redis: the last
	// Acks may still be on their way.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := newQueue(t, rdb, redisqueue.Options{NoCreate: true}).WaitIdle(ctx); err != nil {
		n, _ := rdb.XLen(context.Background(), "{collab:webhook}:stream").Result()
		t.Errorf("the stream holds %d entries after every event was handled: %v", n, err)
	}
	t.Logf("%d events; %d not yet handled when a was killed; all handled at least once, %d twice", len(want), pendingAtKill, twice)
	if pendingAtKill == 0 {
		t.Error("the kill came after everything was handled; the test proves nothing")
	}
}

// sendAll sends updates from..to-1 of every issue, concurrently across
// issues and in order within each, to the receiver target(i) names.
func sendAll(t *testing.T, target func(i int) string, want *[]string, from, to int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for issue := 1; issue <= issues; issue++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := from; n < to; n++ {
				if err := send(target(issue+n), issueBody(issue, n)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				*want = append(*want, issueKey(issue, n))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// checkOrder checks that each issue's updates were handled in the order
// they were sent.
func checkOrder(t *testing.T, order []string) {
	t.Helper()
	last := map[string]string{}
	for _, k := range order {
		i := strings.LastIndex(k, "/")
		issue, at := k[:i], k[i+1:]
		if at < last[issue] {
			t.Errorf("%s handled after %s/%s", k, issue, last[issue])
		}
		last[issue] = at
	}
}
