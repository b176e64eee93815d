package mcptools

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// FromOps is the spec of each operation of the registry, in its order,
// but for those that read or write files on this machine.
func FromOps(all []*ops.Op) []Spec {
	specs := make([]Spec, 0, len(all))
	for _, op := range all {
		if served(op) {
			specs = append(specs, fromOp(op))
		}
	}
	return specs
}

// served reports whether a tool serves op. Not one that touches local
// files: an agent steered by what it read could upload any file the user
// can read. Nor one that writes binary content: an agent cannot read an
// archive, and the build's record (build_view) already gives the
// artifacts' name and size without downloading them.
func served(op *ops.Op) bool { return !op.LocalFiles && !op.Binary }

func fromOp(op *ops.Op) Spec {
	return Spec{
		Name: op.ID(), Toolset: op.Noun, Description: description(op),
		Writes: op.Writes, Destructive: op.Destructive, Idempotent: op.Idempotent,
		Args: argsSchema(op), Record: op.Record, List: op.List, Fields: op.Fields,
		Run: func(ctx context.Context, c *collab.Client, args map[string]any) (Result, error) {
			in, err := op.Input(args)
			if err != nil {
				return Result{}, err
			}
			r, err := op.Run(ctx, c, in)
			return Result{Record: r.Record, Items: r.Items, Write: r.Write}, err
		},
	}
}

// description is the operation's summary and help, as sentences.
func description(op *ops.Op) string {
	d := op.Summary + "."
	if op.Help != "" {
		d += " " + unquote(op.Help)
	}
	return d
}

// argsSchema is the object schema of the operation's arguments: each
// argument's kind gives its JSON type, its enum its values and its help
// line its description.
func argsSchema(op *ops.Op) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, a := range op.Args {
		p := &jsonschema.Schema{Type: a.Kind.JSONType(), Description: unquote(a.Help), Enum: enum(a.Enum)}
		if a.Kind == ops.KindTime {
			p.Format = "date-time"
		}
		if p.Type == "array" { // a list's enum is its items'
			p.Items = &jsonschema.Schema{Type: "string", Enum: p.Enum}
			p.Enum = nil
		}
		s.Properties[a.Name] = p
		s.PropertyOrder = append(s.PropertyOrder, a.Name)
		if a.Required {
			s.Required = append(s.Required, a.Name)
		}
	}
	return s
}

func enum(values []string) []any {
	var out []any
	for _, v := range values {
		out = append(out, v)
	}
	return out
}

// unquote turns the backquoted name of a value in a usage line ("the
// `TITLE`") into a plain word.
func unquote(help string) string {
	parts := strings.Split(help, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = strings.ToLower(parts[i])
	}
	return strings.Join(parts, "")
}
