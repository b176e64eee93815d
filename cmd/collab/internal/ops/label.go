package ops

import (
	"context"
	"fmt"

	"github.com/collabsvc/collab"
)

var labelArg = Arg{Name: "name", Kind: KindString, Required: true, Positional: true, Complete: CompleteLabel, Help: "the label's `NAME`"}

var labelFields = []string{"name", "color", "description", "open_issues_count", "open_merge_requests_count"}

var labelOps = []*Op{
	{
		Noun: "label", Verb: "list", Summary: "List a project's labels",
		Args: []Arg{ProjectArg}, Idempotent: true, SDK: []string{"Labels.All"},
		Record: RecordOf[collab.Label](), List: true, Fields: labelFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Labels.All(ctx, in.Project(), nil, in.IterOptions()...))
		},
	},
	{
		Noun: "label", Verb: "create", Summary: "Create a label",
		Args: []Arg{ProjectArg, labelArg,
			{Name: "color", Kind: KindString, Required: true, Help: "the `COLOR`, as #RRGGBB"},
			{Name: "description", Kind: KindString, Help: "the `TEXT` that says what it means"}},
		Writes: true, SDK: []string{"Labels.Create"},
		Record: RecordOf[collab.Label](), Fields: labelFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Labels.Create(ctx, in.Project(), &collab.CreateLabelOptions{
				Name: in.String("name"), Color: in.String("color"), Description: Ptr[string](in, "description")}))
		},
	},
	{
		Noun: "label", Verb: "edit", Summary: "Rename a label or change its color or description",
		Args: append([]Arg{ProjectArg, labelArg}, fieldArgs[collab.UpdateLabelOptions](map[string]string{
			"new_name": "rename it to `NAME`", "color": "the `COLOR`, as #RRGGBB", "description": "the `TEXT` that says what it means"})...),
		Writes: true, Idempotent: true, SDK: []string{"Labels.Update"},
		Record: RecordOf[collab.Label](), Fields: labelFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Labels.Update(ctx, in.Project(), in.String("name"), fill[collab.UpdateLabelOptions](in)))
		},
	},
	{
		Noun: "label", Verb: "delete", Summary: "Delete a label",
		Args: []Arg{ProjectArg, labelArg}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Labels.Delete"},
		Record: RecordOf[collab.DeletedLabel](), Fields: []string{"id", "title", "color"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Labels.Delete(ctx, in.Project(), in.String("name")))
		},
	},
	labelCall("subscribe", "Subscribe to a label's issues and merge requests", "Labels.Subscribe", (*collab.LabelsService).Subscribe),
	labelCall("unsubscribe", "Stop a label's notifications", "Labels.Unsubscribe", (*collab.LabelsService).Unsubscribe),
}

func labelCall(verb, summary, sdk string, call func(*collab.LabelsService, context.Context, any, string) (*collab.Label, *collab.Response, error)) *Op {
	return &Op{
		Noun: "label", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, labelArg},
		Writes: true, Idempotent: true, SDK: []string{sdk, "Labels.All"},
		Record: RecordOf[collab.Label](), Fields: labelFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return orGet(func() (*collab.Label, *collab.Response, error) { return findLabel(ctx, c, in) })(call(c.Labels, ctx, in.Project(), in.String("name")))
		},
	}
}

// findLabel finds the label the "name" argument names; the server has no
// endpoint for one label.
func findLabel(ctx context.Context, c *collab.Client, in Input) (*collab.Label, *collab.Response, error) {
	for l, err := range c.Labels.All(ctx, in.Project(), nil) {
		if err != nil {
			return nil, nil, err
		}
		if l.Name == in.String("name") {
			return l, nil, nil
		}
	}
	return nil, nil, fmt.Errorf("no label %q: %w", in.String("name"), collab.ErrNotFound)
}
