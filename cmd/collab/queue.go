package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// queueCmd holds the flags every collab queue subcommand shares.
type queueCmd struct {
	std    stdio
	target string
	prefix string
	group  string
	asJSON bool
}

func newQueueCmd(std stdio) *cobra.Command {
	q := &queueCmd{std: std}
	cmd := groupCmd(cmdText{
		use:   "queue",
		short: "Inspect a webhook queue and its dead letters",
		long: `Inspect the queue of a webhook receiver, on disk (a directory, as given to
collab hook listen --queue or diskqueue.Open) or in Redis (a redis:// or rediss://
URL, as used by redisqueue):

  stats               depth, age of the oldest pending delivery, dead letters
  dead                the dead letters, oldest first (--json for a JSON array)
  requeue ID|--all    put dead letters back in the queue, attempts reset
  delete ID           drop a dead letter for good
  compact             give back the disk space of handled deliveries (disk only)

A disk queue belongs to one process at a time: while a receiver runs on the
directory these commands refuse to touch it. Stop the receiver first, or use
its own Handler methods. A Redis queue is shared: these commands work while
receivers run.`,
		example: `  collab queue stats --queue ~/.cache/hooks
  collab queue dead --queue redis://localhost:6379/0 --json | jq '.[].last_error'
  collab queue requeue --queue ~/.cache/hooks --all`,
	}, q.statsCmd(), q.deadCmd(), q.requeueCmd(), q.deleteCmd(), q.compactCmd())
	f := cmd.PersistentFlags()
	f.StringVar(&q.target, "queue", "", "the queue: a `DIR`ectory, or a redis:// URL")
	f.StringVar(&q.prefix, "redis-prefix", "", "key prefix of a Redis queue (default redisqueue's)")
	f.StringVar(&q.group, "redis-group", "", "consumer group of a Redis queue (default redisqueue's)")
	return cmd
}

// queueOp is what a collab queue subcommand does with the open queue.
type queueOp func(context.Context, webhook.Queue) error

// opCmd is a collab queue subcommand. plan checks the command line before
// the queue is opened, so that a usage error needs no queue, and returns the
// op that runs on the open queue.
func (q *queueCmd) opCmd(text cmdText, args cobra.PositionalArgs, plan func(args []string) (queueOp, error)) *cobra.Command {
	return leafCmd(text, args, func(ctx context.Context, args []string) error {
		op, err := plan(args)
		if err != nil {
			return err
		}
		return q.with(ctx, op)
	})
}

func (q *queueCmd) statsCmd() *cobra.Command {
	return readCmd(q, cmdText{use: "stats", short: "Print the depth, the oldest pending delivery and the dead letters"},
		"print one JSON object", webhook.Queue.Stats, q.printStats)
}

func (q *queueCmd) deadCmd() *cobra.Command {
	return readCmd(q, cmdText{use: "dead", short: "List the dead letters, oldest first"},
		"print a JSON array, with each delivery's headers and body", webhook.Queue.DeadLetters, q.printDead)
}

// readCmd is a subcommand that reads one thing from the queue and prints it,
// as a table or, with --json, as JSON.
func readCmd[T any](q *queueCmd, text cmdText, jsonUsage string, read func(webhook.Queue, context.Context) (T, error), print func(T) error) *cobra.Command {
	cmd := q.opCmd(text, rangeArgs(0, 0), func([]string) (queueOp, error) {
		return func(ctx context.Context, wq webhook.Queue) error {
			v, err := read(wq, ctx)
			if err != nil {
				return err
			}
			return print(v)
		}, nil
	})
	cmd.Flags().BoolVar(&q.asJSON, "json", false, jsonUsage)
	return cmd
}

func (q *queueCmd) requeueCmd() *cobra.Command {
	var all bool
	cmd := q.opCmd(cmdText{use: "requeue ID|--all", short: "Put dead letters back in the queue, their attempts reset"},
		rangeArgs(0, 1), func(args []string) (queueOp, error) {
			if all == (len(args) == 1) {
				return nil, usagef("requeue takes one ID or --all")
			}
			return q.eachOp(args, "requeued", all, webhook.Queue.Requeue)
		})
	cmd.Flags().BoolVar(&all, "all", false, "requeue every dead letter")
	return cmd
}

func (q *queueCmd) deleteCmd() *cobra.Command {
	return q.opCmd(cmdText{use: "delete ID", short: "Drop a dead letter for good"},
		rangeArgs(1, 1), func(args []string) (queueOp, error) {
			return q.eachOp(args, "deleted", false, webhook.Queue.Delete)
		})
}

func (q *queueCmd) compactCmd() *cobra.Command {
	return q.opCmd(cmdText{use: "compact", short: "Give back the disk space of handled deliveries (disk queue only)"},
		rangeArgs(0, 0), func([]string) (queueOp, error) {
			if isRedisURL(q.target) {
				return nil, usagef("compact applies to a disk queue; Redis frees the space of handled deliveries itself")
			}
			return func(_ context.Context, wq webhook.Queue) error {
				if err := wq.(*diskqueue.Queue).Compact(); err != nil {
					return err
				}
				_, err := fmt.Fprintln(q.std.out, "compacted")
				return err
			}, nil
		})
}

// eachOp parses the dead letter ids in args and returns the op that applies
// op to each of them, or with all to every dead letter, and says what it
// did.
func (q *queueCmd) eachOp(args []string, done string, all bool, op func(webhook.Queue, context.Context, uint64) error) (queueOp, error) {
	ids, err := parseIDs(args)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, wq webhook.Queue) error {
		if all {
			if ids, err = deadIDs(ctx, wq); err != nil {
				return err
			}
		}
		for _, id := range ids {
			if err := op(wq, ctx, id); err != nil {
				if errors.Is(err, webhook.ErrNotDeadLettered) {
					return fmt.Errorf("no dead letter has id %d", id)
				}
				return err
			}
		}
		_, err := fmt.Fprintf(q.std.out, "%s %d\n", done, len(ids))
		return err
	}, nil
}

func parseIDs(args []string) ([]uint64, error) {
	ids := make([]uint64, 0, len(args))
	for _, a := range args {
		id, err := strconv.ParseUint(a, 10, 64)
		if err != nil || id == 0 {
			return nil, usagef("%q is not a delivery id (a positive integer, as collab queue dead prints)", a)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func deadIDs(ctx context.Context, wq webhook.Queue) ([]uint64, error) {
	dead, err := wq.DeadLetters(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, len(dead))
	for i, d := range dead {
		ids[i] = d.ID
	}
	return ids, nil
}

// with opens the queue, runs fn on it and closes it.
func (q *queueCmd) with(ctx context.Context, fn func(context.Context, webhook.Queue) error) error {
	var (
		wq      webhook.Queue
		release func() error
		err     error
	)
	switch {
	case q.target == "":
		return usagef("--queue is required: a directory, or a redis:// URL")
	case isRedisURL(q.target):
		wq, release, err = q.openRedis(ctx)
	default:
		wq, err = openDisk(q.target)
		release = func() error { return wq.Close() }
	}
	if err != nil {
		return err
	}
	err = fn(ctx, wq)
	if cerr := release(); err == nil {
		err = cerr
	}
	return err
}

func isRedisURL(s string) bool {
	return strings.HasPrefix(s, "redis://") || strings.HasPrefix(s, "rediss://") || strings.HasPrefix(s, "unix://")
}

// cliConsumer names this command in a Redis queue's consumer group. It
// never takes a delivery; one fixed name keeps the group from filling up
// with a consumer per run.
const cliConsumer = "collab-queue-cli"

func (q *queueCmd) openRedis(ctx context.Context) (webhook.Queue, func() error, error) {
	opts, err := redis.ParseURL(q.target)
	if err != nil {
		return nil, nil, usagef("--queue: %v", err)
	}
	rdb := redis.NewClient(opts)
	rq, err := redisqueue.New(ctx, rdb, redisqueue.Options{Prefix: q.prefix, Group: q.group, Consumer: cliConsumer})
	if err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	return rq, func() error { return errors.Join(rq.Close(), rdb.Close()) }, nil
}

// lockWait is how long collab queue waits for a disk queue's lock before it
// concludes that a receiver holds it.
const lockWait = 200 * time.Millisecond

// openDisk opens the disk queue in dir, which must exist. A running
// receiver holds the queue file's lock for as long as it runs; the lock is
// tried first, briefly and read-only, so that a held queue is refused with
// a clear message instead of a wait.
func openDisk(dir string) (*diskqueue.Queue, error) {
	path := filepath.Join(dir, "queue.db")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no disk queue in %s: %w", dir, err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: lockWait, ReadOnly: true})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("the queue in %s is held by a running receiver (its file is locked); stop the receiver first", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the queue in %s: %w", dir, err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	return diskqueue.Open(dir, diskqueue.Options{})
}

// statsLine is collab queue stats --json.
type statsLine struct {
	Depth       int        `json:"depth"`
	Oldest      *time.Time `json:"oldest"`
	OldestAge   float64    `json:"oldest_age_seconds"`
	DeadLetters int        `json:"dead_letters"`
}

func (q *queueCmd) printStats(st webhook.QueueStats) error {
	line := statsLine{Depth: st.Pending, DeadLetters: st.DeadLetters}
	if !st.Oldest.IsZero() {
		line.Oldest = &st.Oldest
		line.OldestAge = time.Since(st.Oldest).Round(time.Second).Seconds()
	}
	if q.asJSON {
		return writeJSONLine(q.std.out, line)
	}
	oldest := "none"
	if line.Oldest != nil {
		oldest = fmt.Sprintf("%s (%s ago)", st.Oldest.UTC().Format(time.RFC3339), time.Duration(line.OldestAge)*time.Second)
	}
	_, err := fmt.Fprintf(q.std.out, "depth         %d\noldest        %s\ndead letters  %d\n", line.Depth, oldest, line.DeadLetters)
	return err
}

// deadLine is one dead letter as collab queue dead --json prints it.
type deadLine struct {
	ID          uint64          `json:"id"`
	Kind        webhook.Kind    `json:"kind"`
	Key         string          `json:"key"`
	ReceivedAt  time.Time       `json:"received_at"`
	Attempts    int             `json:"attempts"`
	LastError   string          `json:"last_error"`
	Synthesized bool            `json:"synthesized"`
	Headers     json.RawMessage `json:"headers"`
	Body        json.RawMessage `json:"body"`
}

func (q *queueCmd) printDead(dead []*webhook.Delivery) error {
	if q.asJSON {
		lines := make([]deadLine, len(dead))
		for i, d := range dead {
			lines[i] = toDeadLine(d)
		}
		return writeJSONLine(q.std.out, lines)
	}
	tw := tabwriter.NewWriter(q.std.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tATTEMPTS\tRECEIVED\tLAST ERROR")
	for _, d := range dead {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", d.ID, d.Kind, d.Attempt, d.ReceivedAt.UTC().Format(time.RFC3339), oneLine(d.LastError))
	}
	return tw.Flush()
}

func toDeadLine(d *webhook.Delivery) deadLine {
	headers, _ := json.Marshal(d.Header)
	body := json.RawMessage(d.Body)
	if !json.Valid(body) {
		body, _ = json.Marshal(string(d.Body)) // a damaged body, shown as a string
	}
	return deadLine{ID: d.ID, Kind: d.Kind, Key: d.Key, ReceivedAt: d.ReceivedAt, Attempts: d.Attempt,
		LastError: d.LastError, Synthesized: d.Synthesized, Headers: headers, Body: body}
}

// oneLine keeps an error message on its line of the table.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
