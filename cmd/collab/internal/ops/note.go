package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var noteFields = []string{"id", "author.username", "created_at", "system", "body"}

// The arguments that name what notes and award emoji are on: an issue or
// a merge request, by its number.
var (
	onIssueArg = Arg{Name: "issue", Kind: KindIssue, Help: "on the issue with this `NUMBER` (#iid)"}
	onMRArg    = Arg{Name: "merge_request", Kind: KindMergeRequest, Help: "on the merge request with this `NUMBER` (!iid)"}
	noteArg    = Arg{Name: "note", Kind: KindInt, Required: true, Positional: true, Help: "the note's `ID`"}
)

// errNoTarget is the error of a note or emoji operation given neither or
// both of issue and merge_request.
var errNoTarget = &InputError{"give one of issue and merge_request"}

// target is the issue or merge request a note or award emoji operation is
// on: kind "issue" or "mr", and its global id.
func target(ctx context.Context, c *collab.Client, in Input) (kind string, id int, err error) {
	switch {
	case in.Has("issue") == in.Has("merge_request"):
		return "", 0, errNoTarget
	case in.Has("issue"):
		is, err := in.Issue(ctx, c)
		if err != nil {
			return "", 0, err
		}
		return "issue", is.ID, nil
	}
	mr, err := in.MergeRequest(ctx, c)
	if err != nil {
		return "", 0, err
	}
	return "mr", mr.ID, nil
}

// noteOp is a note operation: run gets the target's kind and id.
func noteOp(op *Op, run func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error)) *Op {
	op.Noun = "note"
	op.Args = append([]Arg{ProjectArg, onIssueArg, onMRArg}, op.Args...)
	op.SDK = append([]string{"Issues.GetByIID", "MergeRequests.GetByIID"}, op.SDK...)
	op.Run = func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		kind, id, err := target(ctx, c, in)
		if err != nil {
			return Result{}, err
		}
		return run(ctx, c, in, kind, id)
	}
	return op
}

var noteOps = []*Op{
	noteOp(&Op{Verb: "list", Summary: "List the notes (comments) on an issue or a merge request",
		Idempotent: true, SDK: []string{"Notes.AllIssueNotes", "Notes.AllMergeRequestNotes"},
		Record: RecordOf[collab.Note](), List: true, Fields: noteFields,
	}, func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error) {
		if kind == "issue" {
			return Many(c.Notes.AllIssueNotes(ctx, in.Project(), id, nil, in.IterOptions()...))
		}
		return Many(c.Notes.AllMergeRequestNotes(ctx, in.Project(), id, nil, in.IterOptions()...))
	}),
	noteOp(&Op{Verb: "view", Summary: "Show a note", Args: []Arg{noteArg},
		Idempotent: true, SDK: []string{"Notes.GetIssueNote", "Notes.GetMergeRequestNote"},
		Record: RecordOf[collab.Note](), Fields: noteFields,
	}, func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error) {
		if kind == "issue" {
			return One(c.Notes.GetIssueNote(ctx, in.Project(), id, in.Int("note")))
		}
		return One(c.Notes.GetMergeRequestNote(ctx, in.Project(), id, in.Int("note")))
	}),
	noteOp(&Op{Verb: "edit", Summary: "Replace a note's text", Args: []Arg{noteArg, bodyArg},
		Writes: true, Idempotent: true, SDK: []string{"Notes.UpdateIssueNote", "Notes.UpdateMergeRequestNote"},
		Record: RecordOf[collab.Note](), Fields: noteFields,
	}, func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error) {
		if kind == "issue" {
			return One(c.Notes.UpdateIssueNote(ctx, in.Project(), id, in.Int("note"), &collab.UpdateNoteOptions{Body: in.String("body")}))
		}
		return One(c.Notes.UpdateMergeRequestNote(ctx, in.Project(), id, in.Int("note"), &collab.UpdateNoteOptions{Body: in.String("body")}))
	}),
	noteOp(&Op{Verb: "delete", Summary: "Delete a note", Args: []Arg{noteArg},
		Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Notes.DeleteIssueNote", "Notes.DeleteMergeRequestNote"},
	}, func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error) {
		if kind == "issue" {
			return Done(c.Notes.DeleteIssueNote(ctx, in.Project(), id, in.Int("note")))
		}
		return Done(c.Notes.DeleteMergeRequestNote(ctx, in.Project(), id, in.Int("note")))
	}),
	// A plain create: it carries its own time, and comments that a
	// retried script must not repeat go through issue comment and mr comment.
	noteOp(&Op{Verb: "import", Summary: "Add a note dated in the past, for a migration (administrators and owners)",
		Args:   []Arg{bodyArg, {Name: "created_at", Kind: KindTime, Required: true, Help: "the note's `TIME` (RFC 3339)"}},
		Writes: true, SDK: []string{"Notes.CreateIssueNote", "Notes.CreateMergeRequestNote"},
		Record: RecordOf[collab.Note](), Fields: noteFields,
	}, func(ctx context.Context, c *collab.Client, in Input, kind string, id int) (Result, error) {
		if kind == "issue" {
			return One(c.Notes.CreateIssueNote(ctx, in.Project(), id, &collab.CreateNoteOptions{Body: in.String("body"), CreatedAt: collab.Ptr(in.Time("created_at"))}))
		}
		return One(c.Notes.CreateMergeRequestNote(ctx, in.Project(), id, &collab.CreateNoteOptions{Body: in.String("body"), CreatedAt: collab.Ptr(in.Time("created_at"))}))
	}),
}
