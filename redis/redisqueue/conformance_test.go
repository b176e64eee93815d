package redisqueue_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

var _ webhook.IdleWaiter = (*redisqueue.Queue)(nil)

// TestConformance runs the suite every webhook.Queue passes, each check on
// a queue of its own: one server, a prefix each.
func TestConformance(t *testing.T) {
	rdb := startRedis(t)
	var n atomic.Int64
	queuetest.Run(t, queuetest.Maker{
		Open: func(t *testing.T, maxPending int, maxBytes int64) queuetest.Queue {
			if maxBytes > 0 {
				t.Skip("redisqueue has no bound on bytes")
			}
			prefix := fmt.Sprintf("{conformance-%d}:", n.Add(1))
			return newQueue(t, rdb, redisqueue.Options{Prefix: prefix, MaxPending: int64(maxPending)})
		},
	})
}
