package main

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// completeTimeout bounds how long completion waits for the server: a shell
// waits while it asks, and a slow answer is worth less than none.
const completeTimeout = 2 * time.Second

// completeLimit is how many values completion offers at most.
const completeLimit = 50

// complete registers completion from the server for the positional
// arguments and, when flags is set, for the flags that have one.
func (c *opCmd) complete(positional []*ops.Arg, flags bool) {
	c.cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		// A project given positionally may be absent; count from the end.
		i := len(args)
		if len(positional) > 0 && positional[0].Kind == ops.KindProject && len(positional) > 1 {
			i++
		}
		if i >= len(positional) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if positional[i].Name == "file" {
			return nil, cobra.ShellCompDirectiveDefault
		}
		return c.values(cmd.Context(), positional[i].Completion(), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
	for i := range c.op.Args {
		a := &c.op.Args[i]
		if !flags || a.Positional || (a.Completion() == ops.CompleteNone && len(a.Enum) == 0) {
			continue
		}
		_ = c.cmd.RegisterFlagCompletionFunc(flagName(a), func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(a.Enum) > 0 {
				return a.Enum, cobra.ShellCompDirectiveNoFileComp
			}
			return c.values(cmd.Context(), a.Completion(), toComplete), cobra.ShellCompDirectiveNoFileComp
		})
	}
}

// completers are the operations that list a completion's values, with the
// value and the description of each item.
var completers = map[ops.Completion]struct {
	noun, verb  string
	args        map[string]any
	value, desc string
}{
	ops.CompleteProject:      {"project", "list", map[string]any{}, "path_with_namespace", "description"},
	ops.CompleteIssue:        {"issue", "list", map[string]any{"state": "opened"}, "iid", "title"},
	ops.CompleteMergeRequest: {"mr", "list", map[string]any{"state": "opened"}, "iid", "title"},
	ops.CompleteLabel:        {"label", "list", map[string]any{}, "name", "description"},
	ops.CompleteBranch:       {"branch", "list", map[string]any{}, "name", ""},
}

// values asks the server for the values of a completion, within
// completeTimeout; on any failure it offers nothing rather than an error.
func (c *opCmd) values(ctx context.Context, what ops.Completion, prefix string) []cobra.Completion {
	comp, ok := completers[what]
	if !ok {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completeTimeout)
	defer cancel()
	op := ops.Lookup(comp.noun, comp.verb)
	values := map[string]any{}
	for k, v := range comp.args {
		values[k] = v
	}
	if what == ops.CompleteProject {
		// The server searches names, not namespaces: "acme/we" asks for "we".
		if _, name, ok := strings.Cut(prefix, "/"); ok && name != "" {
			values["search"] = name
		}
	} else if err := c.completionProject(ctx, values); err != nil {
		return nil
	}
	in, err := op.Input(values)
	if err != nil {
		return nil
	}
	client, err := c.cfg.apiClient()
	if err != nil {
		return nil
	}
	defer client.Close()
	res, err := op.Run(ctx, client, in)
	if err != nil || res.Items == nil {
		return nil
	}
	var out []cobra.Completion
	var o outputFlags
	for it, err := range res.Items {
		if err != nil || len(out) == completeLimit {
			break
		}
		v, err := o.generic(it)
		m, _ := v.(map[string]any)
		if err != nil || m == nil {
			break
		}
		val := cell(m[comp.value])
		if !strings.HasPrefix(val, prefix) {
			continue
		}
		if d := cell(m[comp.desc]); comp.desc != "" && d != "" {
			val = cobra.CompletionWithDesc(val, d)
		}
		out = append(out, val)
	}
	return out
}

// completionProject sets the project the command line names, or the
// default one.
func (c *opCmd) completionProject(ctx context.Context, values map[string]any) error {
	if f := c.cmd.Flags().Lookup(projectFlag); f != nil && f.Changed {
		values["project"] = f.Value.String()
		return nil
	}
	p, err := c.cfg.project(ctx)
	values["project"] = p
	return err
}

// followEvery is how often build trace --follow asks for more of the log.
const followEvery = 2 * time.Second

// followTrace prints a build's log and then what the build appends, until
// the build is neither pending nor running.
func followTrace(ctx context.Context, client *collab.Client, in ops.Input, out io.Writer) error {
	trace, view := ops.Lookup("build", "trace"), ops.Lookup("build", "view")
	printed := 0
	for {
		// Read the state first: a log read after the build ended is whole.
		state, err := view.Run(ctx, client, in)
		if err != nil {
			return err
		}
		var b strings.Builder
		res, err := trace.Run(ctx, client, in)
		if err == nil {
			err = res.Write(&b)
		}
		if err != nil {
			return err
		}
		if s := b.String(); len(s) > printed {
			if _, err := io.WriteString(out, s[printed:]); err != nil {
				return err
			}
			printed = len(s)
		}
		if !state.Pending {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followInterval()):
		}
	}
}

// followInterval is followEvery, or $COLLAB_FOLLOW_INTERVAL for tests.
func followInterval() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("COLLAB_FOLLOW_INTERVAL")); err == nil && d > 0 {
		return d
	}
	return followEvery
}
