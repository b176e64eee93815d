package ops

import (
	"context"
	"time"

	"github.com/collabsvc/collab"
)

// The arguments that several operations share.
var (
	issueArg = Arg{Name: "issue", Kind: KindIssue, Required: true, Positional: true,
		Help: "the issue's `NUMBER` in the project (#iid)"}
	titleArg       = Arg{Name: "title", Kind: KindString, Help: "the `TITLE`"}
	descriptionArg = Arg{Name: "description", Kind: KindString, Help: "the description `TEXT`, in Markdown"}
	assigneeArg    = Arg{Name: "assignee_id", Kind: KindInt, Help: "assign to the user with this `ID`"}
	milestoneIDArg = Arg{Name: "milestone_id", Kind: KindInt, Help: "set the milestone by its `ID`"}
	labelsArg      = Arg{Name: "labels", Kind: KindStrings, Complete: CompleteLabel, Help: "set these `LABELS` (comma-separated or repeated)"}
	addLabelsArg   = Arg{Name: "add_labels", Kind: KindStrings, Complete: CompleteLabel, Help: "add these `LABELS`, keeping the others"}
	rmLabelsArg    = Arg{Name: "remove_labels", Kind: KindStrings, Complete: CompleteLabel, Help: "remove these `LABELS`, keeping the others"}
	orderByArg     = Arg{Name: "order_by", Kind: KindString, Enum: []string{"created_at", "updated_at"}, Help: "order by `FIELD` (default created_at)"}
	sortArg        = Arg{Name: "sort", Kind: KindString, Enum: []string{"asc", "desc"}, Help: "sort `ORDER` (default desc)"}
	bodyArg        = Arg{Name: "body", Kind: KindString, Required: true, Help: "the comment `TEXT`, in Markdown"}
	issueStates    = []string{"opened", "closed"}
)

// issueFields are the columns of an issue.
var issueFields = []string{"iid", "title", "state", "labels", "author.username", "updated_at"}

var issueOps = []*Op{
	{
		Noun: "issue", Verb: "list", Summary: "List a project's issues, newest first",
		Args: []Arg{ProjectArg,
			{Name: "state", Kind: KindString, Enum: issueStates, Help: "only issues in `STATE` (default both)"},
			{Name: "labels", Kind: KindStrings, Complete: CompleteLabel, Help: "only issues with all these `LABELS`"},
			{Name: "milestone", Kind: KindString, Help: "only issues of the milestone titled `TITLE`"},
			orderByArg, sortArg},
		Idempotent: true, SDK: []string{"Issues.All"},
		Record: RecordOf[collab.Issue](), List: true, Fields: issueFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Issues.All(ctx, in.Project(), &collab.ListIssuesOptions{
				State: Ptr[collab.IssueState](in, "state"), Labels: collab.LabelNames(in.Strings("labels")),
				Milestone: Ptr[string](in, "milestone"), OrderBy: Ptr[collab.OrderBy](in, "order_by"), Sort: Ptr[collab.SortOrder](in, "sort"),
			}, in.IterOptions()...))
		},
	},
	{
		Noun: "issue", Verb: "list-mine", Summary: "List the issues you created, across projects",
		Args: []Arg{
			{Name: "state", Kind: KindString, Enum: issueStates, Help: "only issues in `STATE` (default both)"},
			{Name: "labels", Kind: KindStrings, Complete: CompleteLabel, Help: "only issues with all these `LABELS`"},
			orderByArg, sortArg},
		Idempotent: true, SDK: []string{"Issues.AllMine"},
		Record: RecordOf[collab.Issue](), List: true, Fields: append([]string{"project_id"}, issueFields...),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Issues.AllMine(ctx, &collab.ListIssuesOptions{
				State: Ptr[collab.IssueState](in, "state"), Labels: collab.LabelNames(in.Strings("labels")),
				OrderBy: Ptr[collab.OrderBy](in, "order_by"), Sort: Ptr[collab.SortOrder](in, "sort"),
			}, in.IterOptions()...))
		},
	},
	{
		Noun: "issue", Verb: "view", Summary: "Show an issue",
		Args: []Arg{ProjectArg, issueArg}, Idempotent: true, SDK: []string{"Issues.GetByIID"},
		Record: RecordOf[collab.Issue](), Fields: append(issueFields, "assignee.username", "milestone.title", "description"),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return oneErr(in.Issue(ctx, c))
		},
	},
	{
		Noun: "issue", Verb: "create", Summary: "Open an issue",
		Args: []Arg{ProjectArg, required(titleArg), descriptionArg, assigneeArg, milestoneIDArg, labelsArg,
			{Name: "created_at", Kind: KindTime, Help: "backdate it to `TIME` (RFC 3339; administrators and owners)"}},
		Writes: true, Once: true, SDK: []string{"Issues.CreateOnce"},
		Record: RecordOf[collab.Issue](), Fields: issueFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Issues.CreateOnce(ctx, in.Project(), in.Once(), &collab.CreateIssueOptions{
				Title: in.String("title"), Description: Ptr[string](in, "description"), AssigneeID: Ptr[int](in, "assignee_id"),
				MilestoneID: Ptr[int](in, "milestone_id"), Labels: in.Strings("labels"), CreatedAt: Ptr[time.Time](in, "created_at"),
			}))
		},
	},
	{
		Noun: "issue", Verb: "edit", Summary: "Change an issue's title, description, assignee, milestone or labels",
		Args:   []Arg{ProjectArg, issueArg, titleArg, descriptionArg, assigneeArg, milestoneIDArg, labelsArg, addLabelsArg, rmLabelsArg},
		Writes: true, Idempotent: true, SDK: []string{"Issues.GetByIID", "Issues.Update", "Issues.AddLabels", "Issues.RemoveLabels"},
		Record: RecordOf[collab.Issue](), Fields: issueFields,
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			opt := &collab.UpdateIssueOptions{Title: Ptr[string](in, "title"), Description: Ptr[string](in, "description"),
				AssigneeID: Ptr[int](in, "assignee_id"), MilestoneID: Ptr[int](in, "milestone_id"), Labels: Ptr[collab.LabelNames](in, "labels")}
			return editLabels(in, is, func() (*collab.Issue, *collab.Response, error) {
				return c.Issues.Update(ctx, in.Project(), is.ID, opt)
			}, func(add bool, names []string) (*collab.Issue, *collab.Response, error) {
				if add {
					return c.Issues.AddLabels(ctx, in.Project(), is.ID, names...)
				}
				return c.Issues.RemoveLabels(ctx, in.Project(), is.ID, names...)
			})
		}),
	},
	issueState("close", "Close an issue", collab.IssueClose),
	issueState("reopen", "Reopen a closed issue", collab.IssueReopen),
	{
		Noun: "issue", Verb: "comment", Summary: "Comment on an issue",
		Args:   []Arg{ProjectArg, issueArg, bodyArg},
		Writes: true, Once: true, SDK: []string{"Issues.GetByIID", "Notes.CreateIssueNoteOnce"},
		Record: RecordOf[collab.Note](), Fields: noteFields,
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			return One(c.Notes.CreateIssueNoteOnce(ctx, in.Project(), is.ID, in.Once(), &collab.CreateNoteOptions{Body: in.String("body")}))
		}),
	},
	{
		Noun: "issue", Verb: "move", Summary: "Move an issue to another project (it gets a new number there)",
		Args: []Arg{ProjectArg, issueArg,
			{Name: "to", Kind: KindProject, Required: true, Help: "the project to move it to (`GROUP/PROJECT` or id)"}},
		Writes: true, SDK: []string{"Issues.GetByIID", "Projects.Get", "Issues.Move"},
		Record: RecordOf[collab.Issue](), Fields: append([]string{"project_id"}, issueFields...),
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			to, _, err := c.Projects.Get(ctx, idOrPath(in.String("to")))
			if err != nil {
				return Result{}, err
			}
			return One(c.Issues.Move(ctx, in.Project(), is.ID, to.ID))
		}),
	},
	issueCall("subscribe", "Subscribe to an issue's notifications", "Issues.Subscribe", (*collab.IssuesService).Subscribe),
	issueCall("unsubscribe", "Stop an issue's notifications", "Issues.Unsubscribe", (*collab.IssuesService).Unsubscribe),
	{
		Noun: "issue", Verb: "delete", Summary: "Delete an issue (administrators and project owners)",
		Args:   []Arg{ProjectArg, issueArg},
		Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Issues.GetByIID", "Issues.Delete"},
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			return Done(c.Issues.Delete(ctx, in.Project(), is.ID))
		}),
	},
}

// issueState is an operation that closes or reopens an issue.
func issueState(verb, summary string, event collab.IssueStateEvent) *Op {
	return &Op{
		Noun: "issue", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, issueArg},
		Writes: true, Idempotent: true, SDK: []string{"Issues.GetByIID", "Issues.Update"},
		Record: RecordOf[collab.Issue](), Fields: issueFields,
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			return One(c.Issues.Update(ctx, in.Project(), is.ID, &collab.UpdateIssueOptions{StateEvent: &event}))
		}),
	}
}

// issueCall is an operation that makes one call on an issue, found by its
// number, and returns it.
func issueCall(verb, summary, sdk string, call func(*collab.IssuesService, context.Context, any, int) (*collab.Issue, *collab.Response, error)) *Op {
	return &Op{
		Noun: "issue", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, issueArg},
		Writes: true, Idempotent: true, SDK: []string{"Issues.GetByIID", sdk},
		Record: RecordOf[collab.Issue](), Fields: issueFields,
		Run: onIssue(func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error) {
			return unchanged(is)(call(c.Issues, ctx, in.Project(), is.ID))
		}),
	}
}
