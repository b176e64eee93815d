package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var milestoneArg = Arg{Name: "milestone", Kind: KindInt, Required: true, Positional: true, Help: "the milestone's `ID`"}

var milestoneFields = []string{"id", "iid", "title", "state", "due_date"}

var milestoneHelp = map[string]string{"title": "the `TITLE`", "description": "the description (`TEXT`)",
	"due_date": "the due `DATE` (YYYY-MM-DD)", "state_event": "close or activate"}

var milestoneOps = []*Op{
	{
		Noun: "milestone", Verb: "list", Summary: "List a project's milestones",
		Args: []Arg{ProjectArg,
			{Name: "state", Kind: KindString, Enum: []string{"active", "closed"}, Help: "only milestones in `STATE`"}},
		Idempotent: true, SDK: []string{"Milestones.All"},
		Record: RecordOf[collab.Milestone](), List: true, Fields: milestoneFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Milestones.All(ctx, in.Project(), &collab.ListMilestonesOptions{State: Ptr[collab.MilestoneState](in, "state")}, in.IterOptions()...))
		},
	},
	{
		Noun: "milestone", Verb: "view", Summary: "Show a milestone",
		Args: []Arg{ProjectArg, milestoneArg}, Idempotent: true, SDK: []string{"Milestones.Get"},
		Record: RecordOf[collab.Milestone](), Fields: append(milestoneFields, "description"),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Milestones.Get(ctx, in.Project(), in.Int("milestone")))
		},
	},
	{
		Noun: "milestone", Verb: "create", Summary: "Create a milestone",
		Args:   append([]Arg{ProjectArg}, fieldArgs[collab.CreateMilestoneOptions](milestoneHelp)...),
		Writes: true, SDK: []string{"Milestones.Create"},
		Record: RecordOf[collab.Milestone](), Fields: milestoneFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Milestones.Create(ctx, in.Project(), fill[collab.CreateMilestoneOptions](in)))
		},
	},
	{
		Noun: "milestone", Verb: "edit", Summary: "Change a milestone, or close or activate it",
		Args:   append([]Arg{ProjectArg, milestoneArg}, enum(fieldArgs[collab.UpdateMilestoneOptions](milestoneHelp), "state_event", "close", "activate")...),
		Writes: true, Idempotent: true, SDK: []string{"Milestones.Update"},
		Record: RecordOf[collab.Milestone](), Fields: milestoneFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Milestones.Update(ctx, in.Project(), in.Int("milestone"), fill[collab.UpdateMilestoneOptions](in)))
		},
	},
	{
		Noun: "milestone", Verb: "issues", Summary: "List a milestone's issues",
		Args: []Arg{ProjectArg, milestoneArg}, Idempotent: true, SDK: []string{"Milestones.AllIssues"},
		Record: RecordOf[collab.Issue](), List: true, Fields: issueFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Milestones.AllIssues(ctx, in.Project(), in.Int("milestone"), nil, in.IterOptions()...))
		},
	},
}
