package redisqueue_test

import (
	"testing"

	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// startRedis starts a server without persistence and returns a client.
func startRedis(t testing.TB) *redis.Client {
	t.Helper()
	return redistest.Start(t, false).Client(nil)
}

// runRedis is startRedis that also returns a function killing the server.
func runRedis(t testing.TB) (*redis.Client, func()) {
	t.Helper()
	s := redistest.Start(t, false)
	return s.Client(nil), s.Kill
}
