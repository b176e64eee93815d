package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var settingsFields = []string{"default_projects_limit", "signup_enabled", "signin_enabled", "default_project_visibility", "max_attachment_size"}

var settingsOps = []*Op{
	{
		Noun: "settings", Verb: "view", Summary: "Show the application settings (administrators)",
		Idempotent: true, SDK: []string{"Settings.Get"},
		Record: RecordOf[collab.ApplicationSettings](), Fields: settingsFields,
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) { return One(c.Settings.Get(ctx)) },
	},
	{
		Noun: "settings", Verb: "edit", Summary: "Change application settings (administrators)",
		Args:   fieldArgs[collab.UpdateSettingsOptions](nil),
		Writes: true, Idempotent: true, SDK: []string{"Settings.Update"},
		Record: RecordOf[collab.ApplicationSettings](), Fields: settingsFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Settings.Update(ctx, fill[collab.UpdateSettingsOptions](in)))
		},
	},
	{
		Noun: "settings", Verb: "queues", Summary: "Show the background job queues (administrators)",
		Idempotent: true, SDK: []string{"JobQueue.QueueMetrics"}, Record: RecordOf[collab.QueueMetrics](), Fields: []string{"queues"},
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) {
			return One(c.JobQueue.QueueMetrics(ctx))
		},
	},
	{
		Noun: "settings", Verb: "processes", Summary: "Show the background job processes (administrators)",
		Idempotent: true, SDK: []string{"JobQueue.ProcessMetrics"}, Record: RecordOf[collab.ProcessMetrics](), Fields: []string{"processes"},
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) {
			return One(c.JobQueue.ProcessMetrics(ctx))
		},
	},
	{
		Noun: "settings", Verb: "jobs", Summary: "Show the background job counts (administrators)",
		Idempotent: true, SDK: []string{"JobQueue.JobStats"}, Record: RecordOf[collab.JobStats](), Fields: []string{"jobs"},
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) {
			return One(c.JobQueue.JobStats(ctx))
		},
	},
	{
		Noun: "settings", Verb: "job-metrics", Summary: "Show the queues, processes and job counts at once (administrators)",
		Idempotent: true, SDK: []string{"JobQueue.CompoundMetrics"}, Record: RecordOf[collab.CompoundMetrics](), Fields: []string{"queues", "processes", "jobs"},
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) {
			return One(c.JobQueue.CompoundMetrics(ctx))
		},
	},
}

var userFields = []string{"id", "username", "name", "state", "email"}

var userOps = []*Op{
	{
		Noun: "user", Verb: "me", Summary: "Show the user the token belongs to",
		Idempotent: true, SDK: []string{"Users.Current"}, Record: RecordOf[collab.UserDetails](), Fields: userFields,
		Run: func(ctx context.Context, c *collab.Client, _ Input) (Result, error) { return One(c.Users.Current(ctx)) },
	},
	{
		Noun: "user", Verb: "list", Summary: "List users",
		Args: []Arg{{Name: "username", Kind: KindString, Help: "only the user called `NAME`"},
			{Name: "search", Kind: KindString, Help: "only users whose name, username or email matches `TEXT`"},
			{Name: "active", Kind: KindBool, Help: "only active users"}},
		Idempotent: true, SDK: []string{"Users.All"}, Record: RecordOf[collab.UserDetails](), List: true, Fields: userFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Users.All(ctx, &collab.ListUsersOptions{Username: Ptr[string](in, "username"), Search: Ptr[string](in, "search"), Active: in.Bool("active")}, in.IterOptions()...))
		},
	},
	{
		Noun: "user", Verb: "view", Summary: "Show a user",
		Args:       []Arg{{Name: "user", Kind: KindInt, Required: true, Positional: true, Help: "the user's `ID`"}},
		Idempotent: true, SDK: []string{"Users.Get"}, Record: RecordOf[collab.UserDetails](), Fields: userFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Users.Get(ctx, in.Int("user")))
		},
	},
}
