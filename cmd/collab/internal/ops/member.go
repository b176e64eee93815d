package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var memberFields = []string{"id", "username", "name", "access_level", "state"}

// The member arguments: a member is of a project or, with group, of a group.
var (
	memberProjectArg = Arg{Name: "project", Kind: KindProject, Help: "the project, as `GROUP/PROJECT` or its id (unless group is given)"}
	memberGroupArg   = Arg{Name: "group", Kind: KindGroup, Help: "the members of this group (`PATH` or id) instead of a project's"}
	userArg          = Arg{Name: "user", Kind: KindInt, Required: true, Positional: true, Help: "the user's `ID`"}
	accessArg        = Arg{Name: "access", Kind: KindString, Required: true, Enum: accessNames, Help: "guest, reporter, developer, master or owner"}
)

// memberOp is a member operation on a project or, with the group argument,
// a group: it reports neither or both given.
func memberOp(op *Op, project, group func(ctx context.Context, c *collab.Client, in Input) (Result, error)) *Op {
	op.Noun = "member"
	op.Args = append([]Arg{memberProjectArg, memberGroupArg}, op.Args...)
	if !op.Destructive {
		op.Record, op.Fields = RecordOf[collab.Member](), memberFields
	}
	op.Run = func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		switch {
		case in.Has("project") == in.Has("group"):
			return Result{}, errProjectOrGroup
		case in.Has("project"):
			return project(ctx, c, in)
		case group == nil:
			return Result{}, errNoGroupMember
		}
		return group(ctx, c, in)
	}
	return op
}

var (
	errProjectOrGroup = &InputError{"give one of project and group"}
	errNoGroupMember  = &InputError{"the server shows a member of a project only: list the group's members instead"}
)

var memberOps = []*Op{
	memberOp(&Op{Verb: "list", Summary: "List a project's or a group's members",
		Args:       []Arg{{Name: "query", Kind: KindString, Help: "only members whose name matches `TEXT` (projects)"}},
		Idempotent: true, List: true, SDK: []string{"ProjectMembers.All", "GroupMembers.All"}},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.ProjectMembers.All(ctx, in.Project(), &collab.ListProjectMembersOptions{Query: Ptr[string](in, "query")}, in.IterOptions()...))
		},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.GroupMembers.All(ctx, in.Group(), nil, in.IterOptions()...))
		}),
	memberOp(&Op{Verb: "view", Summary: "Show a project's member", Args: []Arg{userArg},
		Idempotent: true, SDK: []string{"ProjectMembers.Get"}},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.ProjectMembers.Get(ctx, in.Project(), in.Int("user")))
		}, nil),
	memberOp(&Op{Verb: "add", Summary: "Give a user access to a project or a group", Args: []Arg{userArg, accessArg},
		Writes: true, SDK: []string{"ProjectMembers.Add", "GroupMembers.Add"}},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.ProjectMembers.Add(ctx, in.Project(), &collab.AddMemberOptions{UserID: in.Int("user"), AccessLevel: accessLevel(in, "access")}))
		},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.GroupMembers.Add(ctx, in.Group(), &collab.AddMemberOptions{UserID: in.Int("user"), AccessLevel: accessLevel(in, "access")}))
		}),
	memberOp(&Op{Verb: "edit", Summary: "Change a member's access", Args: []Arg{userArg, accessArg},
		Writes: true, Idempotent: true, SDK: []string{"ProjectMembers.Update", "GroupMembers.Update"}},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.ProjectMembers.Update(ctx, in.Project(), in.Int("user"), &collab.UpdateMemberOptions{AccessLevel: accessLevel(in, "access")}))
		},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.GroupMembers.Update(ctx, in.Group(), in.Int("user"), &collab.UpdateMemberOptions{AccessLevel: accessLevel(in, "access")}))
		}),
	memberOp(&Op{Verb: "remove", Summary: "Take a user's access away", Args: []Arg{userArg},
		Writes: true, Idempotent: true, Destructive: true, SDK: []string{"ProjectMembers.Remove", "GroupMembers.Remove"}},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.ProjectMembers.Remove(ctx, in.Project(), in.Int("user")))
		},
		func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.GroupMembers.Remove(ctx, in.Group(), in.Int("user")))
		}),
}
