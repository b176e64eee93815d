package redisqueue_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook/queuetest"
	"github.com/redis/go-redis/v9"
)

// snapshot returns every key of the database with its value (serialized,
// or a hash's fields), so that two snapshots differ after any write.
func snapshot(t *testing.T, rdb *redis.Client) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		// A read may rehash a hash, which reorders its DUMP: its fields
		// are compared instead.
		if rdb.Type(ctx, k).Val() == "hash" {
			h, err := rdb.HGetAll(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			out[k] = fmt.Sprint(h) // fmt sorts a map's keys
			continue
		}
		if out[k], err = rdb.Dump(ctx, k).Result(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestNoCreateMissing: a prefix or group that holds no queue is an error
// naming what was looked for, and nothing is written.
func TestNoCreateMissing(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	newQueue(t, rdb, redisqueue.Options{Prefix: "{q}:"})
	before := snapshot(t, rdb)
	for _, c := range []struct {
		opts redisqueue.Options
		want string
	}{
		{redisqueue.Options{Prefix: "{nope}:"}, `no stream {nope}:stream (is the prefix "{nope}:" right?)`},
		{redisqueue.Options{Prefix: "{q}:", Group: "other"}, `the stream {q}:stream has no consumer group "other"`},
	} {
		c.opts.NoCreate = true
		q, err := redisqueue.New(ctx, rdb, c.opts)
		if err == nil {
			q.Close()
			t.Fatalf("New(%+v) opened a queue that does not exist", c.opts)
		}
		if !errors.Is(err, redisqueue.ErrNoQueue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v; want ErrNoQueue saying %q", c.opts, err, c.want)
		}
	}
	if after := snapshot(t, rdb); !maps.Equal(before, after) {
		t.Errorf("New with NoCreate wrote: keys before %v, after %v", keys(before), keys(after))
	}
}

// TestNoCreateInspects: a queue opened with NoCreate reads what is there
// and writes nothing, not even its consumer; when the stream goes away it
// reports ErrNoQueue rather than creating it again.
func TestNoCreateInspects(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	rq := newQueue(t, rdb, redisqueue.Options{Prefix: "{q}:"})
	put(t, rq, delivery("a", "issue/1"))
	if err := rq.DeadLetter(ctx, queuetest.Take(t, rq).ID, "boom"); err != nil {
		t.Fatal(err)
	}
	put(t, rq, delivery("b", "issue/1"))
	rq.Close() // its checks would create the stream again
	before := snapshot(t, rdb)

	q := newQueue(t, rdb, redisqueue.Options{Prefix: "{q}:", NoCreate: true})
	st, err := q.Stats(ctx)
	if err != nil || st.Pending != 1 || st.DeadLetters != 1 {
		t.Fatalf("Stats: %+v, %v; want 1 pending and 1 dead letter", st, err)
	}
	if dead, err := q.DeadLetters(ctx); err != nil || len(dead) != 1 || dead[0].LastError != "boom" {
		t.Fatalf("DeadLetters: %v, %v", dead, err)
	}
	if err := q.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if after := snapshot(t, rdb); !maps.Equal(before, after) {
		t.Errorf("a NoCreate queue wrote while inspecting: keys before %v, after %v", keys(before), keys(after))
	}

	if err := rdb.Del(ctx, "{q}:stream").Err(); err != nil {
		t.Fatal(err)
	}
	if err := q.Check(ctx); !errors.Is(err, redisqueue.ErrNoQueue) {
		t.Fatalf("Check with the stream gone: %v, want ErrNoQueue", err)
	}
	if err := q.Put(ctx, delivery("c", "")); !errors.Is(err, redisqueue.ErrNoQueue) {
		t.Fatalf("Put with the stream gone: %v, want ErrNoQueue", err)
	}
	takeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if d, err := q.Take(takeCtx); !errors.Is(err, redisqueue.ErrNoQueue) {
		t.Fatalf("Take with the stream gone: %v, %v; want ErrNoQueue", d, err)
	}
	if n, err := rdb.Exists(ctx, "{q}:stream").Result(); err != nil || n != 0 {
		t.Fatalf("the stream was created again (%d, %v)", n, err)
	}
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
