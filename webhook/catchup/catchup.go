// Package catchup hands a webhook receiver what it missed while it was not
// receiving: it asks the API what changed in each project since a
// checkpoint kept in the receiver's queue, and stores every change in the
// webhook.Handler as a synthesized event, which the same callbacks handle
// as a delivery (see webhook.Delivery.Synthesized and Delivery.Record).
// Changes the receiver already has are skipped by dedup key, so Run is
// cheap to call at every start, and safe on several receivers sharing one
// queue.
//
//	h, err := webhook.NewHandler(opts)
//	...
//	stats, err := catchup.Run(ctx, h, client, catchup.Options{Projects: catchup.IDs(42)})
//
// A synthesized event is the state of the record when catch-up read it, so
// it cannot tell:
//   - the exact action. Action is a guess from the record: "open" for an
//     issue or merge request created since the checkpoint and still open,
//     "close", "reopen" or "merge" from its state, else "update";
//   - the intermediate states: three edits while the receiver was down are
//     one event, and a build that went from pending to success is one event
//     with its last status;
//   - who acted: User is nil on issue and merge request events (a note's
//     User is its author, a push's the pusher);
//   - what the payload alone carries: the changes, a merge request's last
//     commit and a cross-project source, a build's pipeline (its id is 0,
//     its status null) and before_sha (40 zeros), line positions of diff
//     comments;
//   - comments on commits and snippets, tag pushes the project events do not
//     list, and wiki page edits: the API does not list them by time.
package catchup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
	"github.com/collabsvc/collab/webhook"
)

// Project names a project to catch up on, by id or by path, as a caller
// has it: make one with ID, Path or Of. A project's checkpoint is kept
// under the name it is given by, so name each project the same way every
// time.
type Project struct {
	id   int
	path string
}

// ID names a project by its id.
func ID(id int) Project { return Project{id: id} }

// IDs names projects by their ids.
func IDs(ids ...int) []Project {
	ps := make([]Project, len(ids))
	for i, id := range ids {
		ps[i] = ID(id)
	}
	return ps
}

// Path names a project by its "namespace/project" path, or by its id
// written in decimal, as a flag or a setting gives it.
func Path(path string) Project {
	if id, err := strconv.Atoi(path); err == nil && id > 0 {
		return ID(id)
	}
	return Project{path: path}
}

// Of names a project record by its id.
func Of(p *collab.Project) Project { return ID(p.ID) }

// String returns the id or the path.
func (p Project) String() string {
	if p.path != "" {
		return p.path
	}
	return strconv.Itoa(p.id)
}

// ref is the project as the client's methods take it.
func (p Project) ref() any {
	if p.path != "" {
		return p.path
	}
	return p.id
}

// Options configure Run.
type Options struct {
	// Projects are the projects to catch up on.
	Projects []Project
	// Since is where to start for a project the queue holds no checkpoint
	// for. Zero means from now: the first catch-up of a project only
	// records where the project stands, and the next one hands over what
	// changed after that.
	Since time.Time
	// Overlap is how far before the checkpoint each catch-up reads again,
	// for changes the server saved a little late; what the receiver already
	// has is skipped by dedup key. Default 1 minute.
	Overlap time.Duration
}

// Stats count what a catch-up found.
type Stats struct {
	// Admitted counts the synthesized events stored for the callbacks, by
	// kind.
	Admitted map[webhook.Kind]int
	// Duplicates counts changes skipped because the queue holds their dedup
	// key: the receiver already has them.
	Duplicates int
	// Ignored counts changes of kinds without a callback.
	Ignored int
}

// Run asks the API what changed in each project since the checkpoint kept
// in h's queue, and stores every change in h as a synthesized event.
//
// It reads, per project: the issues and merge requests updated since the
// checkpoint (newest first, stopping at the checkpoint), with the comments
// made on them since; the builds newer than the last one seen, and the ones
// that were unfinished then; and the pushes and comments among the
// project's events. The events are stored oldest first, so the callbacks see
// them in the order they happened; the checkpoint moves only once all of a
// project's events are stored. An error for one project does not stop the
// others; the errors are returned together. Each project's run is reported
// to the handler's Observer (CatchUpEnded).
func Run(ctx context.Context, h *webhook.Handler, c *collab.Client, opts Options) (Stats, error) {
	return run(ctx, h, c, opts, time.Time{})
}

// OnLoss returns a function for webhook.Options.OnLoss: when the queue's
// engine reports that it lost what it stored after a time, the function
// catches up on opts.Projects from that time (or from the checkpoint, if
// earlier) into the handler, whatever the checkpoints say:
//
//	h, err := webhook.NewHandler(webhook.Options{
//		Queue:  q,
//		OnLoss: catchup.OnLoss(client, catchup.Options{Projects: catchup.IDs(42)}),
//		...
//	})
func OnLoss(c *collab.Client, opts Options) func(ctx context.Context, h *webhook.Handler, since time.Time) error {
	return func(ctx context.Context, h *webhook.Handler, since time.Time) error {
		if since.IsZero() {
			return errors.New("catchup: OnLoss: no time given")
		}
		_, err := run(ctx, h, c, opts, since)
		return err
	}
}

// run catches up on every project; a non-zero lost moves each checkpoint
// back to it.
func run(ctx context.Context, h *webhook.Handler, c *collab.Client, opts Options, lost time.Time) (Stats, error) {
	stats := Stats{Admitted: map[webhook.Kind]int{}}
	switch {
	case h == nil:
		return stats, errors.New("catchup: nil handler")
	case c == nil:
		return stats, errors.New("catchup: nil client")
	case opts.Overlap < 0:
		return stats, errors.New("catchup: negative Overlap")
	}
	if opts.Overlap == 0 {
		opts.Overlap = time.Minute
	}
	var errs []error
	for _, p := range opts.Projects {
		r := &runner{sink: h.Synthetic(), c: c, p: p, opts: opts, lost: lost, stats: &stats}
		err := r.run(ctx)
		report := webhook.CatchUpReport{Project: p.String(), Changes: r.admitted, Lag: r.lag, Err: err}
		if err != nil {
			errs = append(errs, fmt.Errorf("catchup: project %v: %w", p, err))
		}
		r.sink.Report(ctx, report)
		if ctx.Err() != nil {
			break
		}
	}
	return stats, errors.Join(errs...)
}

// checkpoint is a project's progress, kept in the queue as JSON.
type checkpoint struct {
	// At is the newest change time seen (issue and merge request
	// updated_at, note and project event created_at), in the server's clock.
	At time.Time `json:"at"`
	// After is a floor: nothing at or before it is handed over, however far
	// Overlap reaches back. The first catch-up sets it.
	After time.Time `json:"after,omitzero"`
	// BuildID is the highest build id seen; Unfinished maps the builds that
	// were pending or running then to their status, to look at them again.
	BuildID    int                        `json:"build_id"`
	Unfinished map[int]collab.BuildStatus `json:"unfinished,omitempty"`
}

// checkpointName is where a project's checkpoint is kept.
func checkpointName(p Project) string { return "catchup/" + p.String() }

// runner catches up on one project.
type runner struct {
	sink  webhook.Synthetic
	c     *collab.Client
	p     Project
	opts  Options
	lost  time.Time
	stats *Stats

	admitted int
	lag      time.Duration
}

func (r *runner) run(ctx context.Context) error {
	name := checkpointName(r.p)
	st, found, err := r.load(ctx, name)
	if err != nil || !found {
		return err
	}
	s := &scan{c: r.c, pid: r.p.ref(), checkpoint: st.At, since: st.At.Add(-r.opts.Overlap), after: st.After, notes: map[int]bool{}}
	next, err := s.run(ctx, st)
	if err != nil {
		return err
	}
	for _, ch := range s.changes {
		if err := r.admit(ctx, ch); err != nil {
			return err
		}
		next.At = maxTime(next.At, ch.at)
	}
	if n := len(s.changes); n > 0 {
		r.lag = max(0, s.changes[n-1].at.Sub(st.At))
	}
	next.At, next.After = maxTime(next.At, st.At), st.After
	return r.save(ctx, name, next)
}

// load reads the project's checkpoint, or makes the first one. It reports
// false when there is nothing to read: a first catch-up without Since only
// records where the project stands.
func (r *runner) load(ctx context.Context, name string) (checkpoint, bool, error) {
	var st checkpoint
	raw, err := r.sink.Checkpoint(ctx, name)
	switch {
	case err != nil:
		return st, false, err
	case raw != nil:
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, false, fmt.Errorf("checkpoint %q is damaged: %w", name, err)
		}
	case !r.lost.IsZero():
		st.At, st.After = r.lost, r.lost.Add(-time.Nanosecond)
	case r.opts.Since.IsZero():
		if st, err = baseline(ctx, r.c, r.p.ref()); err != nil {
			return st, false, err
		}
		st.After = st.At
		return st, false, r.save(ctx, name, st)
	default:
		st.At, st.After = r.opts.Since, r.opts.Since.Add(-time.Nanosecond)
	}
	if !r.lost.IsZero() && r.lost.Before(st.At) {
		// What the engine lost may be older than the checkpoint it kept.
		st.At, st.After = r.lost, minTime(st.After, r.lost.Add(-time.Nanosecond))
	}
	return st, true, nil
}

func (r *runner) save(ctx context.Context, name string, st checkpoint) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return r.sink.SetCheckpoint(ctx, name, b)
}

// admit stores one change, marshalling its payload and its record once.
func (r *runner) admit(ctx context.Context, ch change) error {
	body, err := serverform.Encode(ch.payload)
	if err != nil {
		return err
	}
	record, err := json.Marshal(ch.record)
	if err != nil {
		return err
	}
	outcome, err := r.sink.Admit(ctx, ch.kind, body, record)
	switch {
	case err != nil:
		return err
	case outcome == webhook.OutcomeDuplicate:
		r.stats.Duplicates++
	case outcome == webhook.OutcomeIgnored:
		r.stats.Ignored++
	default:
		r.stats.Admitted[ch.kind]++
		r.admitted++
	}
	return nil
}

func sortedIDs[V any](m map[int]V) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func timeOf(t *collab.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.Time
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
