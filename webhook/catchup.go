package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// CatchUpOptions configure Handler.CatchUp.
type CatchUpOptions struct {
	// Projects are the projects to catch up on, each an id (int) or a
	// "namespace/project" path, as the client's methods take them.
	Projects []any
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

// CatchUpStats count what a catch-up found.
type CatchUpStats struct {
	// Admitted counts the synthesized events stored for the callbacks, by
	// kind.
	Admitted map[Kind]int
	// Duplicates counts changes skipped because the queue holds their dedup
	// key: the receiver already has them.
	Duplicates int
	// Ignored counts changes of kinds without a callback.
	Ignored int
}

// catchUpState is a project's checkpoint, kept in the queue as JSON.
type catchUpState struct {
	// At is the newest change time seen (issue and merge request
	// updated_at, note and project event created_at), in the server's clock.
	At time.Time `json:"at"`
	// After is a floor: nothing at or before it is handed over, however far
	// Overlap reaches back. The first catch-up sets it.
	After time.Time `json:"after,omitzero"`
	// BuildID is the highest build id seen; Unfinished maps the builds that
	// were pending or running then to their status, to look at them again.
	BuildID    int            `json:"build_id"`
	Unfinished map[int]string `json:"unfinished,omitempty"`
}

// change is one synthesized event, before it is admitted.
type change struct {
	at     time.Time
	kind   Kind
	body   map[string]any
	record any
}

// CatchUp asks the API what changed in each project since the checkpoint it
// keeps in the handler's Queue, and hands every change to the callbacks as a
// synthesized event: a delivery whose body has the shape of the webhook of
// its kind, built from the API record, with Synthesized set and Record
// holding the record's JSON (see DeliveryFrom). Changes the receiver already
// has, because the webhook arrived or an earlier catch-up admitted them, are
// skipped by dedup key; so catch-up is cheap to run at every start, and safe
// to run on several receivers sharing one queue.
//
// It reads, per project: the issues and merge requests updated since the
// checkpoint (newest first, stopping at the checkpoint), with the comments
// made on them since; the builds newer than the last one seen, and the ones
// that were unfinished then; and the pushes and comments among the project's
// events. The events are admitted oldest first, so the callbacks see them in
// the order they happened; the checkpoint moves only once all of a project's
// events are stored. An error for one project does not stop the others; the
// errors are returned together.
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
//     commit, a build's pipeline id and before_sha, line positions of diff
//     comments, the commit list of a push beyond what project events keep;
//   - comments on commits and snippets, tag pushes the project events do not
//     list, and wiki page edits: the API does not list them by time.
func (h *Handler) CatchUp(ctx context.Context, c *collab.Client, opts CatchUpOptions) (CatchUpStats, error) {
	stats := CatchUpStats{Admitted: map[Kind]int{}}
	if c == nil {
		return stats, errors.New("webhook: CatchUp: nil client")
	}
	if opts.Overlap < 0 {
		return stats, errors.New("webhook: CatchUp: negative Overlap")
	}
	if opts.Overlap == 0 {
		opts.Overlap = time.Minute
	}
	var errs []error
	for _, pid := range opts.Projects {
		if err := h.catchUpProject(ctx, c, pid, opts, &stats); err != nil {
			errs = append(errs, fmt.Errorf("webhook: catching up on project %v: %w", pid, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	return stats, errors.Join(errs...)
}

func checkpointName(pid any) string { return fmt.Sprintf("catchup/%v", pid) }

func (h *Handler) catchUpProject(ctx context.Context, c *collab.Client, pid any, opts CatchUpOptions, stats *CatchUpStats) error {
	name := checkpointName(pid)
	raw, err := h.queue.Checkpoint(ctx, name)
	if err != nil {
		return err
	}
	var st catchUpState
	switch {
	case raw != nil:
		if err := json.Unmarshal(raw, &st); err != nil {
			return fmt.Errorf("checkpoint %q is damaged: %w", name, err)
		}
	case opts.Since.IsZero():
		if st, err = baseline(ctx, c, pid); err != nil {
			return err
		}
		st.After = st.At
		return h.saveCheckpoint(ctx, name, st)
	default:
		st.At, st.After = opts.Since, opts.Since.Add(-time.Nanosecond)
	}
	s := &scan{c: c, pid: pid, checkpoint: st.At, since: st.At.Add(-opts.Overlap), after: st.After, notes: map[int]bool{}}
	if s.project, _, err = c.Projects.Get(ctx, pid); err != nil {
		return err
	}
	if err := s.issues(ctx); err != nil {
		return err
	}
	if err := s.mergeRequests(ctx); err != nil {
		return err
	}
	if err := s.events(ctx); err != nil {
		return err
	}
	next, err := s.builds(ctx, st)
	if err != nil {
		return err
	}
	// Oldest first; the stable sort keeps an issue ahead of its comments
	// made in the same second.
	slices.SortStableFunc(s.changes, func(a, b change) int { return a.at.Compare(b.at) })
	for _, ch := range s.changes {
		if err := h.admitChange(ctx, ch, stats); err != nil {
			return err
		}
		next.At = maxTime(next.At, ch.at)
	}
	next.At, next.After = maxTime(next.At, st.At), st.After
	return h.saveCheckpoint(ctx, name, next)
}

func (h *Handler) saveCheckpoint(ctx context.Context, name string, st catchUpState) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return h.queue.SetCheckpoint(ctx, name, b)
}

// admitChange stores one synthesized event, as ServeHTTP stores a delivery.
func (h *Handler) admitChange(ctx context.Context, ch change, stats *CatchUpStats) error {
	body, err := json.Marshal(ch.body)
	if err != nil {
		return err
	}
	record, err := json.Marshal(ch.record)
	if err != nil {
		return err
	}
	header := http.Header{"Content-Type": {"application/json"}, HeaderEvent: {string(ch.kind)}}
	ev, err := ParsePayload(header, body)
	if ev == nil {
		return fmt.Errorf("a synthesized %s does not decode: %w", ch.kind, err)
	}
	if err != nil {
		h.log(slog.LevelWarn, "webhook: catch-up: some values of a synthesized event not decoded", "kind", ch.kind, "error", err)
	}
	if !h.wants(ev.Kind()) {
		stats.Ignored++
		return nil
	}
	d := newDelivery(header, body, ev, time.Now())
	d.Synthesized, d.Record = true, record
	if d.StateKey != "" {
		// A synthesized body is not the server's: the state is all it shares
		// with the delivery of that change.
		d.Key = d.StateKey
	}
	switch err := h.admit(ctx, d); {
	case errors.Is(err, ErrDuplicate):
		stats.Duplicates++
	case err != nil:
		return err
	default:
		stats.Admitted[ch.kind]++
	}
	return nil
}

// baseline records where a project stands: its newest change time and its
// newest build, and the builds still unfinished on the first page.
func baseline(ctx context.Context, c *collab.Client, pid any) (catchUpState, error) {
	var st catchUpState
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
	st.Unfinished = map[int]string{}
	for _, b := range builds {
		st.BuildID = max(st.BuildID, b.ID)
		if unfinished(b.Status) {
			st.Unfinished[b.ID] = string(b.Status)
		}
	}
	return st, nil
}

// scan collects the changes of one project since a time.
type scan struct {
	c          *collab.Client
	pid        any
	project    *collab.Project
	checkpoint time.Time // the time of the checkpoint
	since      time.Time // read back to here
	after      time.Time // but hand over only what is later than this
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
	return newestFirst(s, s.c.Issues.All(ctx, s.pid, opt), func(is *collab.Issue) *collab.Time { return is.UpdatedAt },
		func(is *collab.Issue) error {
			s.issueByID[is.ID] = is
			s.add(timeOf(is.UpdatedAt), KindIssue, s.issuableBody("issue", s.issueAttributes(is, true), is.Assignee), is)
			return s.readNotes(s.c.Notes.AllIssueNotes(ctx, s.pid, is.ID, nil), NoteableIssue, "issue", s.issueAttributes(is, false))
		})
}

func (s *scan) mergeRequests(ctx context.Context) error {
	s.mrByID = map[int]*collab.MergeRequest{}
	opt := &collab.ListMergeRequestsOptions{OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortDesc)}
	return newestFirst(s, s.c.MergeRequests.All(ctx, s.pid, opt), func(mr *collab.MergeRequest) *collab.Time { return mr.UpdatedAt },
		func(mr *collab.MergeRequest) error {
			s.mrByID[mr.ID] = mr
			s.add(timeOf(mr.UpdatedAt), KindMergeRequest, s.issuableBody("merge_request", s.mergeRequestAttributes(mr, true), mr.Assignee), mr)
			return s.readNotes(s.c.Notes.AllMergeRequestNotes(ctx, s.pid, mr.ID, nil), NoteableMergeRequest, "merge_request",
				s.mergeRequestAttributes(mr, false))
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
func (s *scan) readNotes(notes iter.Seq2[*collab.Note, error], noteableType, key string, noteable map[string]any) error {
	for n, err := range notes {
		if err != nil {
			return err
		}
		s.addNote(n, noteableType, key, noteable)
	}
	return nil
}

func (s *scan) eventNote(ctx context.Context, n collab.Note) error {
	switch n.NoteableType {
	case NoteableIssue:
		return noteOn(s, &n, "issue", s.issueByID, func() (*collab.Issue, *collab.Response, error) {
			return s.c.Issues.Get(ctx, s.pid, n.NoteableID)
		}, s.issueAttributes)
	case NoteableMergeRequest:
		return noteOn(s, &n, "merge_request", s.mrByID, func() (*collab.MergeRequest, *collab.Response, error) {
			return s.c.MergeRequests.Get(ctx, s.pid, n.NoteableID)
		}, s.mergeRequestAttributes)
	}
	return nil
}

// noteOn adds note n on its issue or merge request: the one in cache, or
// else the one get reads, kept there. A record deleted since is no error:
// its events are gone.
func noteOn[T any](s *scan, n *collab.Note, key string, cache map[int]*T, get func() (*T, *collab.Response, error), attributes func(*T, bool) map[string]any) error {
	r := cache[n.NoteableID]
	if r == nil {
		var err error
		if r, _, err = get(); err != nil {
			return ignoreGone(err)
		}
		cache[n.NoteableID] = r
	}
	s.addNote(n, n.NoteableType, key, attributes(r, false))
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
func (s *scan) builds(ctx context.Context, st catchUpState) (catchUpState, error) {
	next := catchUpState{BuildID: st.BuildID, Unfinished: map[int]string{}}
	seen := map[int]bool{}
	take := func(b *collab.Build) {
		seen[b.ID] = true
		next.BuildID = max(next.BuildID, b.ID)
		if unfinished(b.Status) {
			next.Unfinished[b.ID] = string(b.Status)
		}
		at := cmp.Or(timeOf(b.FinishedAt), timeOf(b.StartedAt), timeOf(b.CreatedAt))
		s.add(at, KindBuild, s.buildBody(b), b)
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

func sortedIDs(m map[int]string) []int {
	ids := make([]int, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func unfinished(status collab.BuildStatus) bool {
	return status == collab.BuildPending || status == collab.BuildRunning
}

func (s *scan) add(at time.Time, kind Kind, body map[string]any, record any) {
	s.changes = append(s.changes, change{at: at, kind: kind, body: body, record: record})
}

// The bodies below have the keys of the server's webhooks (see the package
// docs for what they leave out); times are written as the server writes
// them, so that a synthesized event and the webhook of the same change share
// a dedup key.

// issuableBody is the body of an issue or merge request event; objectKind
// is "issue" or "merge_request".
func (s *scan) issuableBody(objectKind string, attributes map[string]any, assignee *collab.User) map[string]any {
	body := map[string]any{
		"object_kind": objectKind, "project": s.hookProject(), "repository": s.repository(false),
		"object_attributes": attributes,
	}
	if assignee != nil {
		body["assignee"] = hookUser(assignee)
	}
	return body
}

// ticketURL is the web page of an issue or merge request.
func (s *scan) ticketURL(objectKind string, iid any) string {
	path := "/issues/"
	if objectKind == "merge_request" {
		path = "/merge_requests/"
	}
	return s.project.WebURL + path + fmt.Sprint(iid)
}

// issueAttributes is an issue's object_attributes, or with full false the
// issue a comment is on (no url or action).
func (s *scan) issueAttributes(is *collab.Issue, full bool) map[string]any {
	a := map[string]any{
		"id": is.ID, "iid": is.IID, "title": is.Title, "description": is.Description, "state": is.State,
		"project_id": is.ProjectID, "author_id": userID(is.Author), "assignee_id": nilIfZero(userID(is.Assignee)),
		"milestone_id": milestoneID(is.Milestone), "due_date": date(is.DueDate),
		"created_at": dbTime(is.CreatedAt), "updated_at": dbTime(is.UpdatedAt),
	}
	if full {
		a["url"] = s.ticketURL("issue", is.IID)
		a["action"] = s.action(string(is.State), is.CreatedAt)
	}
	return a
}

func (s *scan) mergeRequestAttributes(mr *collab.MergeRequest, full bool) map[string]any {
	a := map[string]any{
		"id": mr.ID, "iid": mr.IID, "title": mr.Title, "description": mr.Description, "state": mr.State,
		"merge_status": mr.MergeStatus, "source_branch": mr.SourceBranch, "target_branch": mr.TargetBranch,
		"source_project_id": mr.SourceProjectID, "target_project_id": mr.TargetProjectID,
		"author_id": userID(mr.Author), "assignee_id": nilIfZero(userID(mr.Assignee)), "milestone_id": milestoneID(mr.Milestone),
		"merge_when_build_succeeds": mr.MergeWhenBuildSucceeds, "work_in_progress": mr.WorkInProgress,
		"created_at": dbTime(mr.CreatedAt), "updated_at": dbTime(mr.UpdatedAt), "target": s.hookProject(),
	}
	if full {
		a["url"] = s.ticketURL("merge_request", mr.IID)
		a["action"] = s.action(string(mr.State), mr.CreatedAt)
	}
	return a
}

// action guesses the webhook action from a record's state.
func (s *scan) action(state string, created *collab.Time) string {
	switch state {
	case "closed":
		return "close"
	case "merged":
		return "merge"
	case "reopened":
		return "reopen"
	}
	if timeOf(created).After(s.checkpoint) {
		return "open"
	}
	return "update"
}

// addNote collects a comment made since the checkpoint; key names the
// sibling object ("issue" or "merge_request") that the webhook carries.
func (s *scan) addNote(n *collab.Note, noteableType, key string, noteable map[string]any) {
	at := timeOf(n.CreatedAt)
	if n.System || s.notes[n.ID] || s.old(at) {
		return
	}
	s.notes[n.ID] = true
	body := map[string]any{
		"object_kind": "note", "user": hookUser(n.Author), "project_id": s.project.ID, "project": s.hookProject(),
		"repository": s.repository(false),
		"object_attributes": map[string]any{
			"id": n.ID, "note": n.Body, "noteable_type": noteableType, "noteable_id": n.NoteableID,
			"author_id": userID(n.Author), "project_id": s.project.ID, "attachment": n.Attachment, "system": false,
			"created_at": dbTime(n.CreatedAt), "updated_at": dbTime(n.UpdatedAt), "url": s.ticketURL(key, noteable["iid"]) + "#note_" + strconv.Itoa(n.ID),
		},
		key: noteable,
	}
	s.add(at, KindNote, body, n)
}

// addPush collects a push from a project event: its data is the push
// webhook's body, with fewer keys.
func (s *scan) addPush(e *collab.ProjectEvent, at time.Time) {
	raw, err := json.Marshal(e.Data)
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(raw, &body)
	}
	if err != nil || body == nil {
		body = map[string]any{"before": e.Data.Before, "after": e.Data.After, "ref": e.Data.Ref}
	}
	kind, objectKind := KindPush, "push"
	if strings.HasPrefix(e.Data.Ref, "refs/tags/") {
		kind, objectKind = KindTagPush, "tag_push"
	}
	body["object_kind"], body["event_name"] = objectKind, objectKind
	if id, _ := body["project_id"].(float64); id == 0 {
		body["project_id"] = s.project.ID
	}
	if body["project"] == nil {
		body["project"] = s.hookProject()
	}
	if body["repository"] == nil {
		body["repository"] = s.repository(true)
	}
	s.add(at, kind, body, e)
}

func (s *scan) buildBody(b *collab.Build) map[string]any {
	body := map[string]any{
		"object_kind": "build", "ref": b.Ref, "tag": b.Tag, "build_id": b.ID, "build_name": b.Name,
		"build_stage": b.Stage, "build_status": b.Status, "build_started_at": dbTime(b.StartedAt),
		"build_finished_at": dbTime(b.FinishedAt), "build_duration": nil, "project_id": s.project.ID,
		"project_name": s.project.NameWithNamespace, "repository": s.repository(true),
	}
	if b.StartedAt != nil && b.FinishedAt != nil {
		body["build_duration"] = b.FinishedAt.Sub(b.StartedAt.Time).Seconds()
	}
	if b.Commit != nil {
		body["sha"] = b.Commit.ID
		body["commit"] = map[string]any{
			"sha": b.Commit.ID, "message": b.Commit.Message, "author_name": b.Commit.AuthorName,
			"author_email": b.Commit.AuthorEmail,
		}
	}
	if b.User != nil {
		body["user"] = map[string]any{"id": b.User.ID, "name": b.User.Name, "email": b.User.Email}
	}
	return body
}

func (s *scan) hookProject() map[string]any {
	p := s.project
	namespace := ""
	if p.Namespace != nil {
		namespace = p.Namespace.Name
	}
	var defaultBranch any
	if p.DefaultBranch != "" {
		defaultBranch = p.DefaultBranch
	}
	return map[string]any{
		"name": p.Name, "description": p.Description, "web_url": p.WebURL, "avatar_url": p.AvatarURL,
		"git_ssh_url": p.SSHURLToRepo, "git_http_url": p.HTTPURLToRepo, "namespace": namespace,
		"visibility_level": p.VisibilityLevel, "path_with_namespace": p.PathWithNamespace,
		"default_branch": defaultBranch, "homepage": p.WebURL, "url": p.SSHURLToRepo, "ssh_url": p.SSHURLToRepo,
		"http_url": p.HTTPURLToRepo,
	}
}

// repository is the older project description: short for issues, merge
// requests and notes, long for pushes and builds.
func (s *scan) repository(long bool) map[string]any {
	p := s.project
	r := map[string]any{"name": p.Name, "url": p.SSHURLToRepo, "description": p.Description, "homepage": p.WebURL}
	if long {
		r["git_http_url"], r["git_ssh_url"], r["visibility_level"] = p.HTTPURLToRepo, p.SSHURLToRepo, p.VisibilityLevel
	}
	return r
}

func hookUser(u *collab.User) map[string]any {
	if u == nil {
		return nil
	}
	return map[string]any{"name": u.Name, "username": u.Username, "avatar_url": u.AvatarURL}
}

func userID(u *collab.User) int {
	if u == nil {
		return 0
	}
	return u.ID
}

func milestoneID(m *collab.Milestone) any {
	if m == nil {
		return nil
	}
	return m.ID
}

func nilIfZero(id int) any {
	if id == 0 {
		return nil
	}
	return id
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

// dbTime writes a time as the server's webhooks do, to the second, in UTC.
func dbTime(t *collab.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

func date(t *collab.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.DateOnly)
}
