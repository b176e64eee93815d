package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// queueRef names a webhook queue: a directory for a queue on disk, or a
// Redis URL with a key prefix and a consumer group. collab queue and
// collab hook listen both take one.
type queueRef struct {
	target string // a directory or a Redis URL
	prefix string
	group  string
}

// queueHelp says, for a flag's help, what a queue may be.
const queueHelp = "a directory, or a redis://, rediss:// or unix:// URL"

// redisFlags adds the flags that name a queue within a Redis database.
func (r *queueRef) redisFlags(f *pflag.FlagSet) {
	f.StringVar(&r.prefix, "redis-prefix", "", "key prefix of a Redis queue (default redisqueue's)")
	f.StringVar(&r.group, "redis-group", "", "consumer group of a Redis queue (default redisqueue's)")
}

// open opens the queue. With create false the queue must exist: nothing is
// created, and a directory or prefix that holds no queue is an error
// naming what was looked for. consumer names this process in a Redis
// queue's group ("" for a unique name).
func (r *queueRef) open(ctx context.Context, log *slog.Logger, create bool, consumer string) (webhook.Queue, func() error, error) {
	if !isRedisURL(r.target) {
		return openDisk(r.target, log, create)
	}
	opts, err := redis.ParseURL(r.target)
	if err != nil {
		return nil, nil, usagef("the queue URL: %v", err)
	}
	redis.SetLogger(&redisLog{log: log, seen: map[string]bool{}})
	rdb := redis.NewClient(opts)
	rq, err := redisqueue.New(ctx, rdb, redisqueue.Options{Prefix: r.prefix, Group: r.group, Consumer: consumer,
		NoCreate: !create, Logger: log})
	if err != nil {
		_ = rdb.Close()
		// The address and database, not the URL: it may hold a password.
		return nil, nil, fmt.Errorf("redis at %s, database %d: %w", opts.Addr, opts.DB, err)
	}
	return rq, func() error { return errors.Join(rq.Close(), rdb.Close()) }, nil
}

func isRedisURL(s string) bool {
	return strings.HasPrefix(s, "redis://") || strings.HasPrefix(s, "rediss://") || strings.HasPrefix(s, "unix://")
}

// openDisk opens the disk queue in dir; unless create, dir must hold one.
// A queue another process holds is refused.
func openDisk(dir string, log *slog.Logger, create bool) (webhook.Queue, func() error, error) {
	dq, err := diskqueue.Open(dir, diskqueue.Options{NoCreate: !create, Logger: log}) // damaged deliveries are logged too
	if errors.Is(err, diskqueue.ErrHeld) {
		return nil, nil, fmt.Errorf("%w; a running receiver holds it: stop the receiver first", err)
	}
	if err != nil {
		return nil, nil, err
	}
	return dq, dq.Close, nil
}

// redisLog passes go-redis's own log lines to the command's logger, each
// distinct line once: the client tries a refused connection several times,
// and the error that ends the command says it again.
type redisLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	seen map[string]bool
}

// Printf implements go-redis's logging interface.
func (l *redisLog) Printf(ctx context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.seen[msg] {
		l.seen[msg] = true
		l.log.WarnContext(ctx, msg)
	}
}
