package ops

import (
	"context"

	"github.com/collabsvc/collab"
)

var branchArg = Arg{Name: "branch", Kind: KindString, Required: true, Positional: true, Complete: CompleteBranch, Help: "the branch's `NAME`"}

var branchFields = []string{"name", "protected", "commit.id"}

var branchOps = []*Op{
	{
		Noun: "branch", Verb: "list", Summary: "List a project's branches",
		Args: []Arg{ProjectArg}, Idempotent: true, SDK: []string{"Branches.All"},
		Record: RecordOf[collab.Branch](), List: true, Fields: branchFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Branches.All(ctx, in.Project(), nil, in.IterOptions()...))
		},
	},
	{
		Noun: "branch", Verb: "create", Summary: "Create a branch at a branch, tag or commit",
		Args: []Arg{ProjectArg, branchArg,
			{Name: "ref", Kind: KindString, Required: true, Complete: CompleteBranch, Help: "start it at this branch, tag or commit (`REF`)"}},
		Writes: true, SDK: []string{"Branches.Create"},
		Record: RecordOf[collab.Branch](), Fields: branchFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Branches.Create(ctx, in.Project(), &collab.CreateBranchOptions{Branch: in.String("branch"), Ref: in.String("ref")}))
		},
	},
	{
		Noun: "branch", Verb: "delete", Summary: "Delete a branch",
		Args: []Arg{ProjectArg, branchArg}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Branches.Delete"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.Branches.Delete(ctx, in.Project(), in.String("branch")))
		},
	},
	branchCall("view", "Show a branch", false, "Branches.Get", (*collab.BranchesService).Get),
	branchCall("protect", "Protect a branch from force pushes and deletion", true, "Branches.Protect", (*collab.BranchesService).Protect),
	branchCall("unprotect", "Remove a branch's protection", true, "Branches.Unprotect", (*collab.BranchesService).Unprotect),
}

func branchCall(verb, summary string, writes bool, sdk string, call func(*collab.BranchesService, context.Context, any, string) (*collab.Branch, *collab.Response, error)) *Op {
	return &Op{
		Noun: "branch", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, branchArg},
		Writes: writes, Idempotent: true, SDK: []string{sdk},
		Record: RecordOf[collab.Branch](), Fields: branchFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(call(c.Branches, ctx, in.Project(), in.String("branch")))
		},
	}
}
