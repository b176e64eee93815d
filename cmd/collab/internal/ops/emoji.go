package ops

import (
	"context"
	"iter"

	"github.com/collabsvc/collab"
)

var emojiFields = []string{"id", "name", "user.username", "awardable_type", "created_at"}

var (
	onNoteArg = Arg{Name: "note", Kind: KindInt, Help: "on the note with this `ID` of the issue or merge request"}
	awardArg  = Arg{Name: "award", Kind: KindInt, Required: true, Positional: true, Help: "the award's `ID`"}
)

// emojiOp is an award emoji operation: run gets the SDK's calls for the
// target (an issue, a merge request, or a note on either).
func emojiOp(op *Op, run func(ctx context.Context, in Input, on awards) (Result, error)) *Op {
	op.Noun = "emoji"
	op.Args = append([]Arg{ProjectArg, onIssueArg, onMRArg, onNoteArg}, op.Args...)
	op.SDK = append([]string{"Issues.GetByIID", "MergeRequests.GetByIID"}, op.SDK...)
	op.Run = func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		kind, id, err := target(ctx, c, in)
		if err != nil {
			return Result{}, err
		}
		return run(ctx, in, awardsOn(c.AwardEmoji, kind, id, in))
	}
	return op
}

// awards are the award emoji calls for one target.
type awards struct {
	list   func(ctx context.Context, pid any, iter []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error]
	get    func(ctx context.Context, pid any, award int) (*collab.AwardEmoji, *collab.Response, error)
	create func(ctx context.Context, pid any, name string) (*collab.AwardEmoji, *collab.Response, error)
	del    func(ctx context.Context, pid any, award int) (*collab.AwardEmoji, *collab.Response, error)
}

// awardsOn picks the calls for an issue or a merge request (kind "issue"
// or "mr") with the global id, or for its note when the note argument is
// given.
func awardsOn(s *collab.AwardEmojiService, kind string, id int, in Input) awards {
	switch {
	case kind == "issue" && !in.Has("note"):
		return direct(id, s.AllIssueAwards, s.GetIssueAward, s.CreateIssueAward, s.DeleteIssueAward)
	case kind == "issue":
		return onNote(id, in.Int("note"), s.AllIssueNoteAwards, s.GetIssueNoteAward, s.CreateIssueNoteAward, s.DeleteIssueNoteAward)
	case !in.Has("note"):
		return direct(id, s.AllMergeRequestAwards, s.GetMergeRequestAward, s.CreateMergeRequestAward, s.DeleteMergeRequestAward)
	}
	return onNote(id, in.Int("note"), s.AllMergeRequestNoteAwards, s.GetMergeRequestNoteAward, s.CreateMergeRequestNoteAward, s.DeleteMergeRequestNoteAward)
}

// The signatures of the award emoji methods on an issue or a merge request
// (the target's id) and on a note (the target's id, then the note's).
type (
	awardList   func(ctx context.Context, pid any, id int, opt *collab.ListOptions, iopts ...collab.IterOption) iter.Seq2[*collab.AwardEmoji, error]
	awardCall   func(ctx context.Context, pid any, id, award int) (*collab.AwardEmoji, *collab.Response, error)
	awardCreate func(ctx context.Context, pid any, id int, name string) (*collab.AwardEmoji, *collab.Response, error)

	noteAwardList   func(ctx context.Context, pid any, id, note int, opt *collab.ListOptions, iopts ...collab.IterOption) iter.Seq2[*collab.AwardEmoji, error]
	noteAwardCall   func(ctx context.Context, pid any, id, note, award int) (*collab.AwardEmoji, *collab.Response, error)
	noteAwardCreate func(ctx context.Context, pid any, id, note int, name string) (*collab.AwardEmoji, *collab.Response, error)
)

// direct binds the calls on an issue or a merge request to its id.
func direct(id int, list awardList, get awardCall, create awardCreate, del awardCall) awards {
	return awards{
		list: func(ctx context.Context, pid any, it []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
			return list(ctx, pid, id, nil, it...)
		},
		get: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return get(ctx, pid, id, a)
		},
		create: func(ctx context.Context, pid any, n string) (*collab.AwardEmoji, *collab.Response, error) {
			return create(ctx, pid, id, n)
		},
		del: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return del(ctx, pid, id, a)
		},
	}
}

// onNote binds the calls on a note to its target's id and its own.
func onNote(id, note int, list noteAwardList, get noteAwardCall, create noteAwardCreate, del noteAwardCall) awards {
	return direct(id,
		func(ctx context.Context, pid any, id int, opt *collab.ListOptions, it ...collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
			return list(ctx, pid, id, note, opt, it...)
		},
		func(ctx context.Context, pid any, id, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return get(ctx, pid, id, note, a)
		},
		func(ctx context.Context, pid any, id int, n string) (*collab.AwardEmoji, *collab.Response, error) {
			return create(ctx, pid, id, note, n)
		},
		func(ctx context.Context, pid any, id, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return del(ctx, pid, id, note, a)
		})
}

// emojiSDK names the award emoji methods of one verb on every target.
func emojiSDK(verb string) []string {
	var names []string
	for _, on := range []string{"Issue", "MergeRequest", "IssueNote", "MergeRequestNote"} {
		names = append(names, "AwardEmoji."+verb+on+"Award"+map[bool]string{true: "s"}[verb == "All"])
	}
	return names
}

var emojiOps = []*Op{
	emojiOp(&Op{Verb: "list", Summary: "List the award emoji on an issue, a merge request or a note",
		Idempotent: true, SDK: emojiSDK("All"),
		Record: RecordOf[collab.AwardEmoji](), List: true, Fields: emojiFields,
	}, func(ctx context.Context, in Input, on awards) (Result, error) {
		return Many(on.list(ctx, in.Project(), in.IterOptions()))
	}),
	emojiOp(&Op{Verb: "view", Summary: "Show an award emoji", Args: []Arg{awardArg},
		Idempotent: true, SDK: emojiSDK("Get"), Record: RecordOf[collab.AwardEmoji](), Fields: emojiFields,
	}, func(ctx context.Context, in Input, on awards) (Result, error) {
		return One(on.get(ctx, in.Project(), in.Int("award")))
	}),
	emojiOp(&Op{Verb: "add", Summary: "Award an emoji",
		Args:   []Arg{{Name: "name", Kind: KindString, Required: true, Positional: true, Help: "the emoji's `NAME`, without colons (thumbsup)"}},
		Writes: true, SDK: emojiSDK("Create"), Record: RecordOf[collab.AwardEmoji](), Fields: emojiFields,
	}, func(ctx context.Context, in Input, on awards) (Result, error) {
		return One(on.create(ctx, in.Project(), in.String("name")))
	}),
	emojiOp(&Op{Verb: "remove", Summary: "Take back an award emoji", Args: []Arg{awardArg},
		Writes: true, Idempotent: true, Destructive: true, SDK: emojiSDK("Delete"), Record: RecordOf[collab.AwardEmoji](), Fields: emojiFields,
	}, func(ctx context.Context, in Input, on awards) (Result, error) {
		return One(on.del(ctx, in.Project(), in.Int("award")))
	}),
}
