package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var groupArg = Arg{Name: "group", Kind: KindGroup, Required: true, Positional: true, Help: "the group's `PATH` or id"}

var groupFields = []string{"id", "path", "name", "visibility_level", "web_url"}

var groupHelp = map[string]string{"name": "the `NAME`", "path": "the `PATH`", "description": "the description (`TEXT`)",
	"visibility_level": "0 private, 10 internal, 20 public"}

var groupOps = []*Op{
	{
		Noun: "group", Verb: "list", Summary: "List the groups you can see",
		Args:       []Arg{{Name: "search", Kind: KindString, Help: "only groups whose name or path matches `TEXT`"}},
		Idempotent: true, SDK: []string{"Groups.All"},
		Record: RecordOf[collab.Group](), List: true, Fields: groupFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Groups.All(ctx, &collab.ListGroupsOptions{Search: Ptr[string](in, "search")}, in.IterOptions()...))
		},
	},
	{
		Noun: "group", Verb: "view", Summary: "Show a group",
		Args: []Arg{groupArg}, Idempotent: true, SDK: []string{"Groups.Get"},
		Record: RecordOf[collab.Group](), Fields: append(groupFields, "description"),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Groups.Get(ctx, in.Group()))
		},
	},
	{
		Noun: "group", Verb: "create", Summary: "Create a group",
		Args:   fieldArgs[collab.CreateGroupOptions](groupHelp),
		Writes: true, SDK: []string{"Groups.Create"}, Record: RecordOf[collab.Group](), Fields: groupFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Groups.Create(ctx, fill[collab.CreateGroupOptions](in)))
		},
	},
	{
		Noun: "group", Verb: "edit", Summary: "Change a group",
		Args:   append([]Arg{groupArg}, fieldArgs[collab.UpdateGroupOptions](groupHelp)...),
		Writes: true, Idempotent: true, SDK: []string{"Groups.Update"}, Record: RecordOf[collab.Group](), Fields: groupFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Groups.Update(ctx, in.Group(), fill[collab.UpdateGroupOptions](in)))
		},
	},
	{
		Noun: "group", Verb: "delete", Summary: "Delete a group and its projects",
		Args: []Arg{groupArg}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Groups.Delete"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.Groups.Delete(ctx, in.Group()))
		},
	},
	{
		Noun: "group", Verb: "projects", Summary: "List a group's projects",
		Args: []Arg{groupArg, {Name: "search", Kind: KindString, Help: "only projects whose name matches `TEXT`"},
			{Name: "archived", Kind: KindBool, Help: "only archived projects"}},
		Idempotent: true, SDK: []string{"Groups.AllProjects"},
		Record: RecordOf[collab.Project](), List: true, Fields: projectFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			opt := &collab.ListGroupProjectsOptions{ListProjectsOptions: collab.ListProjectsOptions{
				Search: Ptr[string](in, "search"), Archived: Ptr[bool](in, "archived")}}
			return Many(c.Groups.AllProjects(ctx, in.Group(), opt, in.IterOptions()...))
		},
	},
	{
		Noun: "group", Verb: "transfer", Summary: "Move a project into a group (administrators)",
		Args:   []Arg{groupArg, {Name: "project_id", Kind: KindInt, Required: true, Help: "the project's `ID`"}},
		Writes: true, Idempotent: true, SDK: []string{"Groups.TransferProject"}, Record: RecordOf[collab.Group](), Fields: groupFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Groups.TransferProject(ctx, in.Group(), in.Int("project_id")))
		},
	},
}
