package catchup

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"slices"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// change is one synthesized event, before it is stored: its payload is
// marshalled once, as the body of the delivery.
type change struct {
	at      time.Time
	kind    webhook.Kind
	payload any
	record  any
}

// run reads what changed in the project since st, oldest first, and
// returns the next checkpoint's build part.
func (s *scan) run(ctx context.Context, st checkpoint) (checkpoint, error) {
	var err error
	if s.project, _, err = s.c.Projects.Get(ctx, s.pid); err != nil {
		return checkpoint{}, err
	}
	s.info = hookProject(s.project)
	for _, read := range []func(context.Context) error{s.issues, s.mergeRequests, s.events} {
		if err := read(ctx); err != nil {
			return checkpoint{}, err
		}
	}
	next, err := s.builds(ctx, st)
	if err != nil {
		return next, err
	}
	// Oldest first; the stable sort keeps an issue ahead of its comments
	// made in the same second.
	slices.SortStableFunc(s.changes, func(a, b change) int { return a.at.Compare(b.at) })
	return next, nil
}

// baseline records where a project stands: its newest change time and its
// newest build, and the builds still unfinished on the first page.
func baseline(ctx context.Context, c *collab.Client, pid any) (checkpoint, error) {
	var st checkpoint
	one := collab.ListOptions{PerPage: 1}
	issues, _, err := c.Issues.List(ctx, pid, &collab.ListIssuesOptions{ListOptions: one, OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortDesc)})
	if err != nil {
		return st, err
	}
	for _, is := range issues {
		st.At = maxTime(st.At, timeOf(is.UpdatedAt))
	}
	mrs, _, err := c.MergeRequests.List(ctx, pid, &collab.ListMergeRequestsOptions{ListOptions: one, OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortDesc)})
	if err != nil {
		return st, err
	}
	for _, mr := range mrs {
		st.At = maxTime(st.At, timeOf(mr.UpdatedAt))
	}
	events, _, err := c.Projects.ListEvents(ctx, pid, &one)
	if err != nil {
		return st, err
	}
	for _, e := range events {
		st.At = maxTime(st.At, timeOf(e.CreatedAt))
	}
	builds, _, err := c.Builds.List(ctx, pid, &collab.ListBuildsOptions{ListOptions: collab.ListOptions{PerPage: 100}})
	if err != nil {
		return st, err
	}
	st.Unfinished = map[int]collab.BuildStatus{}
	for _, b := range builds {
		st.BuildID = max(st.BuildID, b.ID)
		if unfinished(b.Status) {
			st.Unfinished[b.ID] = b.Status
		}
	}
	return st, nil
}

// scan collects the changes of one project since a time.
type scan struct {
	c          *collab.Client
	pid        any
	project    *collab.Project
	info       *webhook.Project // the project, as payloads describe it
	checkpoint time.Time        // the time of the checkpoint
	since      time.Time        // read back to here
	after      time.Time        // but hand over only what is later than this
	changes    []change
	notes      map[int]bool // ids of the comments collected
	// The issues and merge requests read, for the comments found in events.
	issueByID map[int]*collab.Issue
	mrByID    map[int]*collab.MergeRequest
}

// old reports whether a change at t is before what this scan hands over.
func (s *scan) old(t time.Time) bool { return t.Before(s.since) || !t.After(s.after) }

func (s *scan) issues(ctx context.Context) error {
	s.issueByID = map[int]*collab.Issue{}
	opt := &collab.ListIssuesOptions{OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortDesc)}
	key := func(is *collab.Issue) (int, *collab.Time) { return is.ID, is.UpdatedAt }
	return readTickets(s, s.c.Issues.All(ctx, s.pid, opt), s.issueByID, key, func(is *collab.Issue) ticketRead {
		return ticketRead{webhook.KindIssue, s.issuePayload(is), s.c.Notes.AllIssueNotes(ctx, s.pid, is.ID, nil), s.issueNoteable(is)}
	})
}

func (s *scan) mergeRequests(ctx context.Context) error {
	s.mrByID = map[int]*collab.MergeRequest{}
	opt := &collab.ListMergeRequestsOptions{OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortDesc)}
	key := func(mr *collab.MergeRequest) (int, *collab.Time) { return mr.ID, mr.UpdatedAt }
	return readTickets(s, s.c.MergeRequests.All(ctx, s.pid, opt), s.mrByID, key, func(mr *collab.MergeRequest) ticketRead {
		return ticketRead{webhook.KindMergeRequest, s.mergeRequestPayload(mr),
			s.c.Notes.AllMergeRequestNotes(ctx, s.pid, mr.ID, nil), s.mergeRequestNoteable(mr)}
	})
}

// ticketRead is what a scan takes from an issue or merge request changed
// since the checkpoint: its event, and the comments on it.
type ticketRead struct {
	kind    webhook.Kind
	payload any
	notes   iter.Seq2[*collab.Note, error]
	on      noteable
}

// readTickets collects the issues or merge requests of list, sorted newest
// updated first, that changed since the checkpoint, each with the comments
// on it; byID keeps them, by the id key tells with their update time, for
// the comments found in events.
func readTickets[T any](s *scan, list iter.Seq2[*T, error], byID map[int]*T, key func(*T) (int, *collab.Time), read func(*T) ticketRead) error {
	updated := func(r *T) *collab.Time { _, at := key(r); return at }
	return newestFirst(s, list, updated, func(r *T) error {
		id, at := key(r)
		byID[id] = r
		t := read(r)
		s.add(timeOf(at), t.kind, t.payload, r)
		return s.readNotes(t.notes, t.on)
	})
}

// events collects pushes, and comments on issues and merge requests that
// were not updated since (deployed servers differ on whether a comment
// touches its issue).
func (s *scan) events(ctx context.Context) error {
	return newestFirst(s, s.c.Projects.AllEvents(ctx, s.pid, nil), func(e *collab.ProjectEvent) *collab.Time { return e.CreatedAt },
		func(e *collab.ProjectEvent) error {
			switch {
			case e.Data != nil && e.Data.After != "":
				s.addPush(e, timeOf(e.CreatedAt))
			case e.Note != nil && !s.notes[e.Note.ID]:
				return s.eventNote(ctx, collab.Note(*e.Note))
			}
			return nil
		})
}

// newestFirst hands take the records of a list sorted newest first, until
// one is older than what the scan hands over.
func newestFirst[T any](s *scan, list iter.Seq2[*T, error], at func(*T) *collab.Time, take func(*T) error) error {
	for r, err := range list {
		if err != nil {
			return err
		}
		if s.old(timeOf(at(r))) {
			return nil
		}
		if err := take(r); err != nil {
			return err
		}
	}
	return nil
}

// readNotes collects the comments made since the checkpoint on one issue
// or merge request.
func (s *scan) readNotes(notes iter.Seq2[*collab.Note, error], on noteable) error {
	for n, err := range notes {
		if err != nil {
			return err
		}
		s.addNote(n, on)
	}
	return nil
}

func (s *scan) eventNote(ctx context.Context, n collab.Note) error {
	switch n.NoteableType {
	case webhook.NoteableIssue:
		return noteOn(s, &n, s.issueByID, func() (*collab.Issue, *collab.Response, error) {
			return s.c.Issues.Get(ctx, s.pid, n.NoteableID)
		}, s.issueNoteable)
	case webhook.NoteableMergeRequest:
		return noteOn(s, &n, s.mrByID, func() (*collab.MergeRequest, *collab.Response, error) {
			return s.c.MergeRequests.Get(ctx, s.pid, n.NoteableID)
		}, s.mergeRequestNoteable)
	}
	return nil
}

// noteOn adds note n on its issue or merge request: the one in cache, or
// else the one get reads, kept there. A record deleted since is no error:
// its events are gone.
func noteOn[T any](s *scan, n *collab.Note, cache map[int]*T, get func() (*T, *collab.Response, error), on func(*T) noteable) error {
	r := cache[n.NoteableID]
	if r == nil {
		var err error
		if r, _, err = get(); err != nil {
			return ignoreGone(err)
		}
		cache[n.NoteableID] = r
	}
	s.addNote(n, on(r))
	return nil
}

// ignoreGone drops the error of a record deleted since: its events are gone.
func ignoreGone(err error) error {
	if errors.Is(err, collab.ErrNotFound) {
		return nil
	}
	return err
}

// builds collects the builds newer than the checkpoint's, and those that
// were unfinished then, and returns the next checkpoint's build part.
func (s *scan) builds(ctx context.Context, st checkpoint) (checkpoint, error) {
	next := checkpoint{BuildID: st.BuildID, Unfinished: map[int]collab.BuildStatus{}}
	seen := map[int]bool{}
	take := func(b *collab.Build) {
		seen[b.ID] = true
		next.BuildID = max(next.BuildID, b.ID)
		if unfinished(b.Status) {
			next.Unfinished[b.ID] = b.Status
		}
		at := cmp.Or(timeOf(b.FinishedAt), timeOf(b.StartedAt), timeOf(b.CreatedAt))
		s.add(at, webhook.KindBuild, s.buildPayload(b), b)
	}
	for b, err := range s.c.Builds.All(ctx, s.pid, nil) {
		if err != nil {
			return next, err
		}
		if st.BuildID > 0 && b.ID <= st.BuildID || st.BuildID == 0 && s.old(timeOf(b.CreatedAt)) {
			break
		}
		take(b)
	}
	for _, id := range sortedIDs(st.Unfinished) {
		if seen[id] {
			continue
		}
		b, _, err := s.c.Builds.Get(ctx, s.pid, id)
		if err != nil {
			if err = ignoreGone(err); err != nil {
				return next, err
			}
			continue
		}
		take(b)
	}
	return next, nil
}

func (s *scan) add(at time.Time, kind webhook.Kind, payload, record any) {
	s.changes = append(s.changes, change{at: at, kind: kind, payload: payload, record: record})
}
