package ops

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/collabsvc/collab"
)

var mrArg = Arg{Name: "merge_request", Kind: KindMergeRequest, Required: true, Positional: true,
	Help: "the merge request's `NUMBER` in the project (!iid)"}

// mrFields are the columns of a merge request.
var mrFields = []string{"iid", "title", "state", "source_branch", "target_branch", "author.username", "updated_at"}

var mrStates = []string{"opened", "closed", "merged", "all"}

var mrOps = []*Op{
	{
		Noun: "mr", Verb: "list", Summary: "List a project's merge requests, newest first",
		Args: []Arg{ProjectArg,
			{Name: "state", Kind: KindString, Enum: mrStates, Help: "only merge requests in `STATE` (default every state)"},
			orderByArg, sortArg},
		Idempotent: true, SDK: []string{"MergeRequests.All"},
		Record: RecordOf[collab.MergeRequest](), List: true, Fields: mrFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.MergeRequests.All(ctx, in.Project(), &collab.ListMergeRequestsOptions{
				State: Ptr[collab.MergeRequestState](in, "state"), OrderBy: Ptr[collab.OrderBy](in, "order_by"), Sort: Ptr[collab.SortOrder](in, "sort"),
			}, in.IterOptions()...))
		},
	},
	{
		Noun: "mr", Verb: "view", Summary: "Show a merge request",
		Args: []Arg{ProjectArg, mrArg}, Idempotent: true, SDK: []string{"MergeRequests.GetByIID"},
		Record: RecordOf[collab.MergeRequest](), Fields: append(mrFields, "merge_status", "labels", "description"),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return oneErr(in.MergeRequest(ctx, c))
		},
	},
	{
		Noun: "mr", Verb: "create", Summary: "Open a merge request",
		Args: []Arg{ProjectArg,
			{Name: "source_branch", Kind: KindString, Required: true, Complete: CompleteBranch, Help: "merge the `BRANCH`"},
			{Name: "target_branch", Kind: KindString, Required: true, Complete: CompleteBranch, Help: "into the `BRANCH`"},
			required(titleArg), descriptionArg, assigneeArg, milestoneIDArg, labelsArg,
			{Name: "target_project_id", Kind: KindInt, Help: "the `ID` of the project to merge into, for a fork"}},
		Writes: true, Once: true, SDK: []string{"MergeRequests.CreateOnce"},
		Record: RecordOf[collab.MergeRequest](), Fields: mrFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.MergeRequests.CreateOnce(ctx, in.Project(), in.Once(), &collab.CreateMergeRequestOptions{
				SourceBranch: in.String("source_branch"), TargetBranch: in.String("target_branch"), Title: in.String("title"),
				Description: Ptr[string](in, "description"), AssigneeID: Ptr[int](in, "assignee_id"),
				MilestoneID: Ptr[int](in, "milestone_id"), Labels: collab.LabelNames(in.Strings("labels")),
				TargetProjectID: Ptr[int](in, "target_project_id"),
			}))
		},
	},
	{
		Noun: "mr", Verb: "edit", Summary: "Change a merge request's title, description, target, assignee, milestone or labels",
		Args: []Arg{ProjectArg, mrArg, titleArg, descriptionArg,
			{Name: "target_branch", Kind: KindString, Complete: CompleteBranch, Help: "merge into `BRANCH` instead"},
			assigneeArg, milestoneIDArg, labelsArg, addLabelsArg, rmLabelsArg},
		Writes: true, Idempotent: true,
		SDK:    []string{"MergeRequests.GetByIID", "MergeRequests.Update", "MergeRequests.AddLabels", "MergeRequests.RemoveLabels"},
		Record: RecordOf[collab.MergeRequest](), Fields: mrFields,
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			opt := &collab.UpdateMergeRequestOptions{Title: Ptr[string](in, "title"), Description: Ptr[string](in, "description"),
				TargetBranch: Ptr[string](in, "target_branch"), AssigneeID: Ptr[int](in, "assignee_id"),
				MilestoneID: Ptr[int](in, "milestone_id"), Labels: Ptr[collab.LabelNames](in, "labels")}
			return editLabels(in, mr, func() (*collab.MergeRequest, *collab.Response, error) {
				return c.MergeRequests.Update(ctx, in.Project(), mr.ID, opt)
			}, func(add bool, names []string) (*collab.MergeRequest, *collab.Response, error) {
				if add {
					return c.MergeRequests.AddLabels(ctx, in.Project(), mr.ID, names...)
				}
				return c.MergeRequests.RemoveLabels(ctx, in.Project(), mr.ID, names...)
			})
		}),
	},
	{
		Noun: "mr", Verb: "merge", Summary: "Merge a merge request, now or when its build succeeds",
		Args: []Arg{ProjectArg, mrArg,
			{Name: "message", Kind: KindString, Help: "the merge commit's `MESSAGE`"},
			{Name: "remove_source_branch", Kind: KindBool, Help: "remove the source branch after the merge"},
			{Name: "when_build_succeeds", Kind: KindBool, Help: "merge when the source branch's build succeeds"},
			{Name: "sha", Kind: KindString, Help: "merge only if the source branch's head is `SHA`"}},
		Writes: true, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.Merge"},
		Record: RecordOf[collab.MergeRequest](), Fields: mrFields,
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return One(c.MergeRequests.Merge(ctx, in.Project(), mr.ID, &collab.MergeMergeRequestOptions{
				MergeCommitMessage: Ptr[string](in, "message"), ShouldRemoveSourceBranch: in.Bool("remove_source_branch"),
				MergeWhenBuildSucceeds: Ptr[bool](in, "when_build_succeeds"), SHA: Ptr[string](in, "sha"),
			}))
		}),
	},
	mrCall("cancel-merge", "Cancel a merge set to happen when the build succeeds", "MergeRequests.CancelMergeWhenBuildSucceeds",
		(*collab.MergeRequestsService).CancelMergeWhenBuildSucceeds),
	mrState("close", "Close a merge request", collab.MergeRequestClose),
	mrState("reopen", "Reopen a closed merge request", collab.MergeRequestReopen),
	{
		Noun: "mr", Verb: "comment", Summary: "Comment on a merge request",
		Args:   []Arg{ProjectArg, mrArg, bodyArg},
		Writes: true, Once: true, SDK: []string{"MergeRequests.GetByIID", "Notes.CreateMergeRequestNoteOnce"},
		Record: RecordOf[collab.Note](), Fields: noteFields,
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return One(c.Notes.CreateMergeRequestNoteOnce(ctx, in.Project(), mr.ID, in.Once(), &collab.CreateNoteOptions{Body: in.String("body")}))
		}),
	},
	{
		Noun: "mr", Verb: "diff", Summary: "Print a merge request's changes as a unified diff",
		Args: []Arg{ProjectArg, mrArg}, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.Changes"},
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			ch, _, err := c.MergeRequests.Changes(ctx, in.Project(), mr.ID)
			if err != nil {
				return Result{}, err
			}
			return Result{Write: func(w io.Writer) error { return writeDiff(w, ch.Changes) }}, nil
		}),
	},
	{
		Noun: "mr", Verb: "commits", Summary: "List a merge request's commits",
		Args: []Arg{ProjectArg, mrArg}, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.Commits"},
		Record: RecordOf[collab.MergeRequestCommit](), List: true, Fields: []string{"short_id", "title", "author_name", "created_at"},
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			commits, _, err := c.MergeRequests.Commits(ctx, in.Project(), mr.ID)
			if err != nil {
				return Result{}, err
			}
			return Many(sliceSeq(commits))
		}),
	},
	{
		Noun: "mr", Verb: "closes", Summary: "List the issues a merge request closes when merged",
		Args: []Arg{ProjectArg, mrArg}, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.AllClosesIssues"},
		Record: RecordOf[collab.ClosingIssue](), List: true, Fields: []string{"id", "title"},
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return Many(c.MergeRequests.AllClosesIssues(ctx, in.Project(), mr.ID, nil, in.IterOptions()...))
		}),
	},
	mrCall("subscribe", "Subscribe to a merge request's notifications", "MergeRequests.Subscribe", (*collab.MergeRequestsService).Subscribe),
	mrCall("unsubscribe", "Stop a merge request's notifications", "MergeRequests.Unsubscribe", (*collab.MergeRequestsService).Unsubscribe),
	{
		Noun: "mr", Verb: "delete", Summary: "Delete a merge request (administrators and project owners)",
		Args:   []Arg{ProjectArg, mrArg},
		Writes: true, Idempotent: true, Destructive: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.Delete"},
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return Done(c.MergeRequests.Delete(ctx, in.Project(), mr.ID))
		}),
	},
}

// mrState is an operation that closes or reopens a merge request.
func mrState(verb, summary string, event collab.MergeRequestStateEvent) *Op {
	return &Op{
		Noun: "mr", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, mrArg},
		Writes: true, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", "MergeRequests.Update"},
		Record: RecordOf[collab.MergeRequest](), Fields: mrFields,
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return One(c.MergeRequests.Update(ctx, in.Project(), mr.ID, &collab.UpdateMergeRequestOptions{StateEvent: &event}))
		}),
	}
}

// mrCall is an operation that makes one call on a merge request, found by
// its number, and returns it.
func mrCall(verb, summary, sdk string, call func(*collab.MergeRequestsService, context.Context, any, int) (*collab.MergeRequest, *collab.Response, error)) *Op {
	return &Op{
		Noun: "mr", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, mrArg},
		Writes: true, Idempotent: true, SDK: []string{"MergeRequests.GetByIID", sdk},
		Record: RecordOf[collab.MergeRequest](), Fields: mrFields,
		Run: onMergeRequest(func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error) {
			return unchanged(mr)(call(c.MergeRequests, ctx, in.Project(), mr.ID))
		}),
	}
}

// writeDiff writes changes as a unified diff, as git prints one.
func writeDiff(w io.Writer, changes []*collab.Change) error {
	for _, ch := range changes {
		if _, err := fmt.Fprintf(w, "diff --git a/%s b/%s\n", ch.OldPath, ch.NewPath); err != nil {
			return err
		}
		// The server's diff starts with its own ---/+++ lines; one without
		// them gets them here.
		if !strings.HasPrefix(ch.Diff, "--- ") {
			if _, err := fmt.Fprintf(w, "--- a/%s\n+++ b/%s\n", ch.OldPath, ch.NewPath); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, ch.Diff); err != nil {
			return err
		}
		if n := len(ch.Diff); n > 0 && ch.Diff[n-1] != '\n' {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
	}
	return nil
}
