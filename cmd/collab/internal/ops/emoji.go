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
	note := in.Int("note")
	switch {
	case kind == "issue" && !in.Has("note"):
		return awards{
			list: func(ctx context.Context, pid any, it []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
				return s.AllIssueAwards(ctx, pid, id, nil, it...)
			},
			get: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.GetIssueAward(ctx, pid, id, a)
			},
			create: func(ctx context.Context, pid any, n string) (*collab.AwardEmoji, *collab.Response, error) {
				return s.CreateIssueAward(ctx, pid, id, n)
			},
			del: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.DeleteIssueAward(ctx, pid, id, a)
			},
		}
	case kind == "issue":
		return awards{
			list: func(ctx context.Context, pid any, it []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
				return s.AllIssueNoteAwards(ctx, pid, id, note, nil, it...)
			},
			get: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.GetIssueNoteAward(ctx, pid, id, note, a)
			},
			create: func(ctx context.Context, pid any, n string) (*collab.AwardEmoji, *collab.Response, error) {
				return s.CreateIssueNoteAward(ctx, pid, id, note, n)
			},
			del: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.DeleteIssueNoteAward(ctx, pid, id, note, a)
			},
		}
	case !in.Has("note"):
		return awards{
			list: func(ctx context.Context, pid any, it []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
				return s.AllMergeRequestAwards(ctx, pid, id, nil, it...)
			},
			get: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.GetMergeRequestAward(ctx, pid, id, a)
			},
			create: func(ctx context.Context, pid any, n string) (*collab.AwardEmoji, *collab.Response, error) {
				return s.CreateMergeRequestAward(ctx, pid, id, n)
			},
			del: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
				return s.DeleteMergeRequestAward(ctx, pid, id, a)
			},
		}
	}
	return awards{
		list: func(ctx context.Context, pid any, it []collab.IterOption) iter.Seq2[*collab.AwardEmoji, error] {
			return s.AllMergeRequestNoteAwards(ctx, pid, id, note, nil, it...)
		},
		get: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return s.GetMergeRequestNoteAward(ctx, pid, id, note, a)
		},
		create: func(ctx context.Context, pid any, n string) (*collab.AwardEmoji, *collab.Response, error) {
			return s.CreateMergeRequestNoteAward(ctx, pid, id, note, n)
		},
		del: func(ctx context.Context, pid any, a int) (*collab.AwardEmoji, *collab.Response, error) {
			return s.DeleteMergeRequestNoteAward(ctx, pid, id, note, a)
		},
	}
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
