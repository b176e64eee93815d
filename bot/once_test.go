package bot

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newOnceBot makes a bot of c on a memory queue that retries at once,
// with attempts attempts per delivery.
func newOnceBot(t *testing.T, c *collab.Client, attempts int) *Bot {
	b, err := New(Options{Client: c, Webhook: webhook.Options{Queue: webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}),
		RetryMin: time.Millisecond, RetryMax: time.Millisecond, MaxAttempts: attempts}})
	require.NoError(t, err)
	return b
}

// triageAndClose is the command of these tests: a label, two comments and
// a close; fail, when set, fails the attempt after them.
func triageAndClose(fail func() error) func(context.Context, *Note, Command) error {
	return func(ctx context.Context, n *Note, _ Command) error {
		if err := n.AddLabels(ctx, "bug"); err != nil {
			return err
		}
		for _, body := range []string{"Triaged.", "Closing."} {
			if err := n.Comment(ctx, body); err != nil {
				return err
			}
		}
		if err := n.Close(ctx); err != nil {
			return err
		}
		return fail()
	}
}

// requests counts the fake's logged requests on issues and their notes, as
// "METHOD what": "POST notes", "GET issue".
func requests(srv *collabtest.Server) map[string]int {
	out := map[string]int{}
	for _, r := range srv.Requests() {
		switch {
		case notesPath.MatchString(r.Path):
			out[r.Method+" notes"]++
		case issuePath.MatchString(r.Path):
			out[r.Method+" issue"]++
		}
	}
	return out
}

// assertHandledOnce checks that issue has each comment once, the label and
// the closed state.
func assertHandledOnce(t *testing.T, w *world, issue int) {
	t.Helper()
	ctx := context.Background()
	notes, _, err := w.c.Notes.ListIssueNotes(ctx, w.pid, issue, nil)
	require.NoError(t, err)
	var bodies []string
	for _, n := range notes {
		bodies = append(bodies, strings.SplitN(n.Body, "\n", 2)[0])
	}
	assert.ElementsMatch(t, []string{"/triage", "Triaged.", "Closing."}, bodies)
	is, _, err := w.c.Issues.Get(ctx, w.pid, issue)
	require.NoError(t, err)
	assert.Equal(t, []string{"bug"}, is.Labels)
	assert.Equal(t, collab.IssueClosed, is.State)
}

// TestFirstAttemptCostsNothing: the first attempt of a delivery makes the
// requests the plain calls make, outside a callback: no read of the
// comments, no read of the state before closing.
func TestFirstAttemptCostsNothing(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 1)
	effects := triageAndClose(func() error { return nil })
	b.Command("triage", effects)
	w.start(t, b)
	plain, is := w.srv.Seed.Issue(w.project, w.bobUser, "Crash").ID, w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	w.settle(t, b)
	w.srv.ClearRequests()
	require.NoError(t, effects(context.Background(), &Note{Thread: &Thread{Client: w.c, ProjectID: w.pid, ID: plain}}, Command{}))
	want := requests(w.srv)
	w.srv.ClearRequests()
	w.srv.Seed.IssueNote(is, w.bobUser, "/triage")
	w.settle(t, b)
	assert.Equal(t, want, requests(w.srv))
	assert.Equal(t, 2, want["POST notes"])
	assert.Zero(t, want["GET notes"])
	assertHandledOnce(t, w, is.ID)
}

// TestRetryAfterEffects: a callback that fails after its effects runs
// again, and the retry reads the comments and the state and makes none of
// them again.
func TestRetryAfterEffects(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 3)
	var attempts atomic.Int32
	b.Command("triage", triageAndClose(func() error {
		if attempts.Add(1) > 1 {
			return nil
		}
		w.srv.ClearRequests()
		return errors.New("failed after the effects")
	}))
	w.start(t, b)
	issueRecord := w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	is := issueRecord.ID
	w.srv.Seed.IssueNote(issueRecord, w.bobUser, "/triage")
	w.settle(t, b)
	assert.EqualValues(t, 2, attempts.Load())
	assert.Equal(t, map[string]int{"GET notes": 2, "GET issue": 2}, requests(w.srv), "reads only")
	assertHandledOnce(t, w, is)
}

// TestRequeuedDeadLetter: a dead letter requeued starts counting attempts
// again, but is not a first attempt: its comments are not posted again.
func TestRequeuedDeadLetter(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 1)
	var fail atomic.Bool
	fail.Store(true)
	b.Command("triage", triageAndClose(func() error {
		if fail.Swap(false) {
			return errors.New("failed after the effects")
		}
		return nil
	}))
	w.start(t, b)
	issueRecord := w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	is := issueRecord.ID
	w.srv.Seed.IssueNote(issueRecord, w.bobUser, "/triage")
	w.settle(t, b)
	ctx := context.Background()
	dead, err := b.Handler().DeadLetters(ctx)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	w.srv.ClearRequests()
	require.NoError(t, b.Handler().Requeue(ctx, dead[0].ID))
	w.settle(t, b)
	assert.Zero(t, requests(w.srv)["POST notes"])
	assertHandledOnce(t, w, is)
}

// TestFailedLookup: a retry whose read of the comments fails posts
// nothing and fails the attempt; the next one posts once.
func TestFailedLookup(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 3)
	var attempts atomic.Int32
	b.Command("reply", func(ctx context.Context, n *Note, _ Command) error {
		switch attempts.Add(1) {
		case 1:
			return errors.New("failed before the reply")
		case 2:
			w.srv.FailNext(1, http.StatusInternalServerError)
		}
		return n.Comment(ctx, "Done.")
	})
	w.start(t, b)
	issueRecord := w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	is := issueRecord.ID
	w.srv.Seed.IssueNote(issueRecord, w.bobUser, "/reply")
	w.settle(t, b)
	assert.EqualValues(t, 3, attempts.Load())
	notes, _, err := w.c.Notes.ListIssueNotes(context.Background(), w.pid, is, nil)
	require.NoError(t, err)
	assert.Len(t, notes, 2, "the command and one reply")
}

// TestThreadOutsideCallback: without a delivery, the calls are the plain
// ones; a nil Thread is ErrNoThread.
func TestThreadOutsideCallback(t *testing.T) {
	w := newWorld(t)
	is := w.srv.Seed.Issue(w.project, w.bobUser, "Crash").ID
	th := &Thread{Client: w.c, ProjectID: w.pid, ID: is}
	ctx := context.Background()
	require.NoError(t, th.Comment(ctx, "Hi"))
	require.NoError(t, th.Comment(ctx, "Hi"))
	require.NoError(t, th.Close(ctx))
	notes, _, err := w.c.Notes.ListIssueNotes(ctx, w.pid, is, nil)
	require.NoError(t, err)
	require.Len(t, notes, 2)
	assert.Equal(t, "Hi", notes[0].Body, "no marker")
	var none *Thread
	assert.ErrorIs(t, none.Comment(ctx, "Hi"), ErrNoThread)
	assert.ErrorIs(t, none.Close(ctx), ErrNoThread)
}

// TestMergeRequestRetry: the calls on a merge request's thread are safe to
// run again too.
func TestMergeRequestRetry(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 3)
	var attempts atomic.Int32
	b.OnMergeRequest(func(ctx context.Context, mr *MergeRequest) error {
		if err := mr.Comment(ctx, "Closing."); err != nil {
			return err
		}
		if err := mr.Close(ctx); err != nil {
			return err
		}
		if attempts.Add(1) == 1 {
			return errors.New("failed after the effects")
		}
		return mr.Reopen(ctx)
	}, webhook.MergeRequestOpen)
	w.start(t, b)
	w.srv.Seed.Branch(w.project, "feature")
	id := w.srv.Seed.MergeRequest(w.project, w.bobUser, "feature", "master", "Fix").ID
	w.settle(t, b)
	ctx := context.Background()
	notes, _, err := w.c.Notes.ListMergeRequestNotes(ctx, w.pid, id, nil)
	require.NoError(t, err)
	assert.Len(t, notes, 1)
	mr, _, err := w.c.MergeRequests.Get(ctx, w.pid, id)
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestReopened, mr.State, "the retry finds it closed, and reopens it")
}

// TestTwoBots: two bots answer one comment; the one whose first attempt
// fails before its reply does not take the other's reply for its own.
func TestTwoBots(t *testing.T) {
	w := newWorld(t)
	helper := w.srv.AddUser("helper", true)
	hc, err := collab.NewClient(w.srv.URL, collab.WithPrivateToken(helper.Token), collab.WithoutRetries())
	require.NoError(t, err)
	first := newOnceBot(t, w.c, 1)
	first.Command("reply", func(ctx context.Context, n *Note, _ Command) error { return n.Comment(ctx, "Done.") })
	second := newOnceBot(t, hc, 2)
	var failed atomic.Bool
	second.Command("reply", func(ctx context.Context, n *Note, _ Command) error {
		if !failed.Swap(true) {
			return errors.New("failed before the reply")
		}
		return n.Comment(ctx, "Done too.")
	})
	w.start(t, first)
	startOn(t, w.srv.AddReceiver(w.pid), second)
	issueRecord := w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	is := issueRecord.ID
	w.srv.Seed.IssueNote(issueRecord, w.bobUser, "/reply")
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	require.NoError(t, w.srv.Settle(sctx, first, second))
	notes, _, err := w.c.Notes.ListIssueNotes(context.Background(), w.pid, is, nil)
	require.NoError(t, err)
	assert.Len(t, notes, 3, "the command and a reply of each bot")
}
