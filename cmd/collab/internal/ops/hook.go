package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var hookArg = Arg{Name: "hook", Kind: KindInt, Required: true, Positional: true, Help: "the hook's `ID`"}

var hookFields = []string{"id", "url", "push_events", "issues_events", "merge_requests_events", "note_events", "build_events"}

var hookHelp = map[string]string{"url": "deliver to `URL`", "push_events": "on pushes", "issues_events": "on issue events",
	"merge_requests_events": "on merge request events", "tag_push_events": "on tag pushes", "note_events": "on comments",
	"build_events": "on build events", "enable_ssl_verification": "verify the receiver's TLS certificate"}

var hookOps = []*Op{
	{
		Noun: "hook", Verb: "list", Summary: "List a project's webhooks",
		Args: []Arg{ProjectArg}, Idempotent: true, SDK: []string{"Hooks.All"},
		Record: RecordOf[collab.ProjectHook](), List: true, Fields: hookFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Hooks.All(ctx, in.Project(), nil, in.IterOptions()...))
		},
	},
	{
		Noun: "hook", Verb: "view", Summary: "Show a webhook",
		Args: []Arg{ProjectArg, hookArg}, Idempotent: true, SDK: []string{"Hooks.Get"},
		Record: RecordOf[collab.ProjectHook](), Fields: hookFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Hooks.Get(ctx, in.Project(), in.Int("hook")))
		},
	},
	{
		Noun: "hook", Verb: "create", Summary: "Add a webhook to a project",
		Args:   append([]Arg{ProjectArg}, fieldArgs[collab.AddHookOptions](hookHelp)...),
		Writes: true, SDK: []string{"Hooks.Add"}, Record: RecordOf[collab.ProjectHook](), Fields: hookFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Hooks.Add(ctx, in.Project(), fill[collab.AddHookOptions](in)))
		},
	},
	{
		Noun: "hook", Verb: "edit", Summary: "Change a webhook (its URL is required again)",
		Args:   append([]Arg{ProjectArg, hookArg}, fieldArgs[collab.UpdateHookOptions](hookHelp)...),
		Writes: true, Idempotent: true, SDK: []string{"Hooks.Update"}, Record: RecordOf[collab.ProjectHook](), Fields: hookFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Hooks.Update(ctx, in.Project(), in.Int("hook"), fill[collab.UpdateHookOptions](in)))
		},
	},
	{
		Noun: "hook", Verb: "delete", Summary: "Remove a webhook",
		Args: []Arg{ProjectArg, hookArg}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Hooks.Delete"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.Hooks.Delete(ctx, in.Project(), in.Int("hook")))
		},
	},
}
