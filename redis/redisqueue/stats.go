package redisqueue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/collabsvc/collab/webhook"
)

// Stats implements webhook.Queue: the stream holds the deliveries not yet
// settled, and its first entry's id tells when the oldest arrived.
func (q *Queue) Stats(ctx context.Context) (webhook.QueueStats, error) {
	var st webhook.QueueStats
	if err := q.open(); err != nil {
		return st, err
	}
	var n, dead *redis.IntCmd
	var first *redis.XMessageSliceCmd
	_, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n, first, dead = p.XLen(ctx, q.stream), p.XRangeN(ctx, q.stream, "-", "+", 1), p.ZCard(ctx, q.o.Prefix+"dead")
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("redisqueue: reading stats: %w", err)
	}
	st.Pending, st.DeadLetters = int(n.Val()), int(dead.Val())
	if m := first.Val(); len(m) > 0 {
		ms, _, _ := strings.Cut(m[0].ID, "-")
		if v, err := strconv.ParseInt(ms, 10, 64); err == nil {
			st.Oldest = time.UnixMilli(v)
		}
	}
	return st, nil
}

// Check implements webhook.Queue: Redis answers, the stream's consumer
// group exists, and MaxPending is not reached.
func (q *Queue) Check(ctx context.Context) error {
	if err := q.open(); err != nil {
		return err
	}
	groups, err := q.rdb.XInfoGroups(ctx, q.stream).Result()
	if err != nil {
		return fmt.Errorf("redisqueue: checking the consumer group: %w", err)
	}
	found := false
	for _, g := range groups {
		found = found || g.Name == q.o.Group
	}
	if !found {
		return fmt.Errorf("redisqueue: consumer group %q is missing", q.o.Group)
	}
	if q.o.MaxPending > 0 {
		n, err := q.rdb.XLen(ctx, q.stream).Result()
		if err != nil {
			return fmt.Errorf("redisqueue: counting pending deliveries: %w", err)
		}
		if n >= q.o.MaxPending {
			return fmt.Errorf("%w: MaxPending %d reached", webhook.ErrQueueFull, q.o.MaxPending)
		}
	}
	return nil
}
