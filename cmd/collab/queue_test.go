package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

func init() {
	extraCmds["seed-queue"] = cmdSeedQueue
	extraCmds["redis-server"] = cmdRedisServer
	extraCmds["redis-keys"] = cmdRedisKeys
}

// seed-queue QUEUE N DEAD [keep] stores N issue deliveries in QUEUE (a
// directory or a redis:// URL), ids 1 to N, and dead-letters the first DEAD
// of them with the reason "boom on attempt 1". With keep, the queue stays
// open (a running receiver) until the script ends, holding one more
// delivery leased.
func cmdSeedQueue(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 || len(args) > 4 {
		ts.Fatalf("usage: seed-queue QUEUE N DEAD [keep]")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	dead, err := strconv.Atoi(args[2])
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	q := openTestQueue(ts, ctx, args[0])
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf(`{"object_kind":"issue","object_attributes":{"id":%d,"iid":%d}}`, 100+i, i)
		ts.Check(q.Put(ctx, &webhook.Delivery{
			Key: fmt.Sprintf("issue/%d/seed", i), Partition: fmt.Sprintf("issue/%d", i), Kind: webhook.KindIssue,
			ReceivedAt: time.Now().Add(-time.Hour), Header: http.Header{webhook.HeaderEvent: {string(webhook.KindIssue)}}, Body: []byte(body),
		}))
	}
	for range dead {
		d, err := q.Take(ctx)
		ts.Check(err)
		ts.Check(q.DeadLetter(ctx, d.ID, "boom on attempt 1"))
	}
	if len(args) == 4 && args[3] == "keep" {
		_, err := q.Take(ctx)
		ts.Check(err)
		ts.Defer(func() { _ = q.Close() })
		return
	}
	ts.Check(q.Close())
}

func openTestQueue(ts *testscript.TestScript, ctx context.Context, target string) webhook.Queue {
	if !strings.HasPrefix(target, "redis://") {
		q, err := diskqueue.Open(target, diskqueue.Options{})
		ts.Check(err)
		return q
	}
	opts, err := redis.ParseURL(target)
	ts.Check(err)
	rdb := redis.NewClient(opts)
	ts.Defer(func() { _ = rdb.Close() })
	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{Consumer: "seed"})
	ts.Check(err)
	return q
}

// redis-server VAR starts a redis-server of the script's own on a free
// loopback port, its files in the work directory, and sets VAR to the URL
// of its database 0, and VAR_HOST to its URL without a database. The
// server is stopped when the script ends.
func cmdRedisServer(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: redis-server VAR")
	}
	bin := needTool(scriptTest(ts), "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	ts.Check(l.Close())
	dir := filepath.Join(ts.Getenv("WORK"), "redis")
	ts.Check(os.MkdirAll(dir, 0o700))
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no")
	ts.Check(cmd.Start())
	ts.Defer(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + port})
	defer rdb.Close()
	deadline := time.Now().Add(waitLimit)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			ts.Fatalf("redis-server on port %s does not answer", port)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Setenv(args[0]+"_HOST", "redis://127.0.0.1:"+port)
	ts.Setenv(args[0], "redis://127.0.0.1:"+port+"/0")
}

// redis-keys URL PATTERN N checks that N keys of the database at URL match
// PATTERN (a Redis glob).
func cmdRedisKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: redis-keys URL PATTERN N")
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	opts, err := redis.ParseURL(args[0])
	ts.Check(err)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	keys, err := rdb.Keys(ctx, args[1]).Result()
	ts.Check(err)
	if len(keys) != want {
		ts.Fatalf("%d keys match %s: %q; want %d", len(keys), args[1], keys, want)
	}
}
