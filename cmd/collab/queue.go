package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// queueCmd holds the flags every collab queue subcommand shares.
type queueCmd struct {
	queueRef
	std    stdio
	log    *slog.Logger
	asJSON bool
}

func newQueueCmd(std stdio) *cobra.Command {
	q := &queueCmd{std: std, log: slog.New(slog.NewTextHandler(std.err, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	cmd := groupCmd(cmdText{
		use:   "queue",
		short: "Inspect a webhook queue and its dead letters",
		long: `Inspect the queue of a webhook receiver. QUEUE is either a directory, for a
queue on disk (as given to collab hook listen --queue or diskqueue.Open), or a
redis://, rediss:// or unix:// URL, for a queue in Redis (as used by
redisqueue; --redis-prefix and --redis-group name it within the database).
Give it as the first argument or with --queue:

  stats [QUEUE]             depth, age of the oldest pending delivery, dead letters
  dead [QUEUE]              the dead letters, oldest first (--json for a JSON array)
  requeue [QUEUE] ID|--all  put dead letters back in the queue, attempts reset
  delete [QUEUE] ID         drop a dead letter for good
  compact [QUEUE]           give back the disk space of handled deliveries (disk only)

These commands write only what they are asked to (requeue, delete, compact).
A directory or a Redis prefix that holds no queue is an error that names
what was looked for: no file and no key is created there.

A disk queue belongs to one process at a time: while a receiver runs on the
directory these commands refuse to touch it. Stop the receiver first, or use
its own Handler methods. A Redis queue is shared: these commands work while
receivers run.`,
		example: `  collab queue stats ~/.cache/hooks
  collab queue stats redis://localhost:6379/0 --redis-prefix '{shop:webhook}:'
  collab queue dead --queue redis://localhost:6379/0 --json | jq '.[].last_error'
  collab queue requeue ~/.cache/hooks --all`,
	}, q.statsCmd(), q.deadCmd(), q.requeueCmd(), q.deleteCmd(), q.compactCmd())
	f := cmd.PersistentFlags()
	f.StringVar(&q.target, "queue", "", "`QUEUE` to inspect: "+queueHelp+"; or give it as the first argument")
	q.redisFlags(f)
	return cmd
}

// queueOp is what a collab queue subcommand does with the open queue.
type queueOp func(context.Context, webhook.Queue) error

// opCmd is a collab queue subcommand that takes lo to hi arguments besides
// the queue. plan checks the command line before the queue is opened, so
// that a usage error needs no queue, and returns the op that runs on the
// open queue.
func (q *queueCmd) opCmd(text cmdText, lo, hi int, plan func(args []string) (queueOp, error)) *cobra.Command {
	return leafCmd(text, cobra.ArbitraryArgs, func(ctx context.Context, args []string) error {
		if q.target == "" {
			if len(args) == 0 {
				return usagef("the queue is required: a directory or a redis:// URL, as the first argument or --queue")
			}
			q.target, args = args[0], args[1:]
		}
		switch {
		case len(args) < lo:
			return usagef("missing argument; usage: collab queue %s", text.use)
		case len(args) > hi:
			return usagef("too many arguments (give the queue once); usage: collab queue %s", text.use)
		}
		op, err := plan(args)
		if err != nil {
			return err
		}
		return q.with(ctx, op)
	})
}

func (q *queueCmd) statsCmd() *cobra.Command {
	return readCmd(q, cmdText{use: "stats [QUEUE]", short: "Print the depth, the oldest pending delivery and the dead letters"},
		"print one JSON object", webhook.Queue.Stats, q.printStats)
}

func (q *queueCmd) deadCmd() *cobra.Command {
	return readCmd(q, cmdText{use: "dead [QUEUE]", short: "List the dead letters, oldest first"},
		"print a JSON array, with each delivery's headers and body", webhook.Queue.DeadLetters, q.printDead)
}

// readCmd is a subcommand that reads one thing from the queue and prints it,
// as a table or, with --json, as JSON.
func readCmd[T any](q *queueCmd, text cmdText, jsonUsage string, read func(webhook.Queue, context.Context) (T, error), print func(T) error) *cobra.Command {
	cmd := q.opCmd(text, 0, 0, func([]string) (queueOp, error) {
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
	cmd := q.opCmd(cmdText{use: "requeue [QUEUE] ID|--all", short: "Put dead letters back in the queue, their attempts reset"},
		0, 1, func(args []string) (queueOp, error) {
			if all == (len(args) == 1) {
				return nil, usagef("requeue takes one ID or --all")
			}
			return q.eachOp(args, "requeued", all, webhook.Queue.Requeue)
		})
	cmd.Flags().BoolVar(&all, "all", false, "requeue every dead letter")
	return cmd
}

func (q *queueCmd) deleteCmd() *cobra.Command {
	return q.opCmd(cmdText{use: "delete [QUEUE] ID", short: "Drop a dead letter for good"},
		1, 1, func(args []string) (queueOp, error) {
			return q.eachOp(args, "deleted", false, webhook.Queue.Delete)
		})
}

func (q *queueCmd) compactCmd() *cobra.Command {
	return q.opCmd(cmdText{use: "compact [QUEUE]", short: "Give back the disk space of handled deliveries (disk queue only)"},
		0, 0, func([]string) (queueOp, error) {
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
	wq, release, err := q.open(ctx, q.log, false, cliConsumer)
	if err != nil {
		return err
	}
	err = fn(ctx, wq)
	if cerr := release(); err == nil {
		err = cerr
	}
	return err
}

// cliConsumer names this command in a Redis queue's consumer group, should
// it ever take a delivery; one fixed name keeps the group from filling up
// with a consumer per run.
const cliConsumer = "collab-queue-cli"

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
		// The table shows the first line of the error; --json has it whole.
		msg, _, cut := strings.Cut(d.LastError, "\n")
		if cut {
			msg += " …"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\n", d.ID, d.Kind, d.Attempt, d.ReceivedAt.UTC().Format(time.RFC3339), msg)
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

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
