package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// nounHelp is what each group of typed commands is about.
var nounHelp = map[string]string{
	"issue":     "Work with a project's issues",
	"mr":        "Work with a project's merge requests",
	"build":     "Work with a project's builds: list, view, trace, retry, cancel, erase, artifacts",
	"label":     "Work with a project's labels",
	"milestone": "Work with a project's milestones",
	"project":   "Work with projects",
	"group":     "Work with groups",
	"member":    "Work with the members of a project or a group",
	"branch":    "Work with a project's branches",
	"hook":      "Work with a project's webhooks (collab hook listen receives them)",
	"emoji":     "Work with award emoji on issues, merge requests and notes",
	"note":      "Work with the notes (comments) on issues and merge requests",
	"settings":  "Work with the application settings and the job queue (administrators)",
	"user":      "Work with users",
}

// typedCmds are the typed commands, one group per noun of the registry.
// existing holds the commands of the same name already built by hand (hook
// has listen and replay), which receive the operations as subcommands.
func typedCmds(cfg *config, std stdio, existing map[string]*cobra.Command, completing bool) []*cobra.Command {
	var out []*cobra.Command
	for _, noun := range ops.Nouns() {
		group := existing[noun]
		if group == nil {
			group = groupCmd(cmdText{use: noun, short: nounHelp[noun]})
			out = append(out, group)
		}
		for _, op := range ops.All() {
			if op.Noun == noun {
				group.AddCommand(newOpCmd(op, cfg, std, completing))
			}
		}
	}
	return out
}

// opCmd runs one operation from the command line.
type opCmd struct {
	op   *ops.Op
	cfg  *config
	std  stdio
	cmd  *cobra.Command
	out  outputFlags
	list listFlags

	exitStatus bool // --exit-status
	follow     bool // build trace --follow
}

// projectFlag is the flag of the "project" argument, as gh and glab name it.
const projectFlag = "repo"

// newOpCmd derives the command of op: its usage line from the positional
// arguments, a flag for each other argument, the output flags for a
// record, and completion from the server.
func newOpCmd(op *ops.Op, cfg *config, std stdio, completing bool) *cobra.Command {
	c := &opCmd{op: op, cfg: cfg, std: std}
	use := []string{op.Verb}
	var positional []*ops.Arg
	for i := range op.Args {
		a := &op.Args[i]
		if !a.Positional {
			continue
		}
		positional = append(positional, a)
		if a.Required && a.Kind != ops.KindProject {
			use = append(use, "<"+a.Name+">")
		} else {
			use = append(use, "["+a.Name+"]")
		}
	}
	long := op.Summary + "."
	if op.Help != "" {
		long += "\n\n" + op.Help
	}
	c.cmd = leafCmd(cmdText{use: strings.Join(use, " "), short: op.Summary, long: long + c.notes()},
		positionalArgs(positional), c.run)
	c.cmd.Annotations = map[string]string{opAnnotation: op.Name()}
	f := c.cmd.Flags()
	for i := range op.Args {
		if a := &op.Args[i]; !a.Positional {
			addArgFlag(f, a)
		}
	}
	if op.Record != nil {
		c.out.bind(f, op)
	}
	if op.List {
		c.list.bind(f)
	}
	if op.Status {
		f.BoolVar(&c.exitStatus, "exit-status", false, "exit 8 while the build is pending or running, 1 when it failed or was canceled")
	}
	if op.Noun == "build" && op.Verb == "trace" {
		f.BoolVar(&c.follow, "follow", false, "keep printing what the build appends until it finishes")
	}
	c.complete(positional, completing)
	return c.cmd
}

// notes is what the help adds to an operation's description: how it
// behaves when run again.
func (c *opCmd) notes() string {
	var b strings.Builder
	switch {
	case c.op.Once:
		b.WriteString("\n\nRun again with the same arguments (or --idempotency-key), it returns what the first run\nmade instead of making another.")
	case c.op.Destructive:
		b.WriteString("\n\nThis cannot be undone.")
	}
	if c.op.Arg("project") != nil && !c.op.Arg("project").Positional {
		b.WriteString("\n\nThe project is -R GROUP/PROJECT, else $COLLAB_REPO, else the git remote of the current\ndirectory that points at the server.")
	}
	return b.String()
}

// flagName is the flag of the argument a: its name in kebab-case, and
// --repo for the project.
func flagName(a *ops.Arg) string {
	if a.Name == "project" && a.Kind == ops.KindProject {
		return projectFlag
	}
	return strings.ReplaceAll(a.Name, "_", "-")
}

// addArgFlag adds the flag of argument a. Every value is kept as text and
// converted by the operation's Input, so that the command line and the MCP
// tools check values alike ("#5" is issue 5).
func addArgFlag(f *pflag.FlagSet, a *ops.Arg) {
	help := a.Help
	if len(a.Enum) > 0 && !strings.Contains(help, strings.Join(a.Enum[:2], ", ")) {
		help += " (" + strings.Join(a.Enum, ", ") + ")"
	}
	name, short := flagName(a), ""
	switch {
	case name == projectFlag:
		short = "R"
		help += " (default $COLLAB_REPO, else the git remote)"
	case a.Required:
		help += " (required)"
	}
	switch a.Kind {
	case ops.KindBool:
		f.BoolP(name, short, false, help)
	case ops.KindStrings:
		f.StringSliceP(name, short, nil, help)
	default:
		f.StringP(name, short, "", help)
	}
}

// positionalArgs checks the count of positional arguments: each required
// one must be there (the project's may come from elsewhere), and no more
// than there are.
func positionalArgs(args []*ops.Arg) cobra.PositionalArgs {
	lo := 0
	for _, a := range args {
		if a.Required && a.Kind != ops.KindProject {
			lo++
		}
	}
	return rangeArgs(lo, len(args))
}

// input collects the values given on the command line, and the project
// from where it is found when not given.
func (c *opCmd) input(ctx context.Context, args []string) (ops.Input, error) {
	values := map[string]any{}
	f := c.cmd.Flags()
	next := 0
	for i := range c.op.Args {
		a := &c.op.Args[i]
		if a.Positional {
			if a.Kind == ops.KindProject && len(args) < countPositional(c.op) {
				continue // the project is not given: found below
			}
			if next < len(args) {
				values[a.Name] = args[next]
				next++
			}
			continue
		}
		fl := f.Lookup(flagName(a))
		if !fl.Changed {
			continue
		}
		switch a.Kind {
		case ops.KindBool:
			values[a.Name], _ = f.GetBool(fl.Name)
		case ops.KindStrings:
			values[a.Name], _ = f.GetStringSlice(fl.Name)
		default:
			values[a.Name] = fl.Value.String()
		}
	}
	if err := c.defaultProject(ctx, values); err != nil {
		return ops.Input{}, err
	}
	in, err := c.op.Input(values)
	if err != nil {
		return ops.Input{}, usageError{err}
	}
	return in, nil
}

// countPositional is the number of op's positional arguments.
func countPositional(op *ops.Op) int {
	n := 0
	for _, a := range op.Args {
		if a.Positional {
			n++
		}
	}
	return n
}

// defaultProject fills the project, when the operation takes one and it
// was not given (nor a group instead), from $COLLAB_REPO or the git remote.
func (c *opCmd) defaultProject(ctx context.Context, values map[string]any) error {
	a := c.op.Arg("project")
	if a == nil || values["project"] != nil || values["group"] != nil {
		return nil
	}
	p, err := c.cfg.project(ctx)
	if err != nil {
		return err
	}
	values["project"] = p
	return nil
}

func (c *opCmd) run(ctx context.Context, args []string) error {
	in, err := c.input(ctx, args)
	if err != nil {
		return err
	}
	if err := c.out.check(c.op); err != nil {
		return err
	}
	if c.list.paginate {
		in = in.WithIter(collab.Prefetch(8))
	}
	client, err := c.cfg.apiClient()
	if err != nil {
		return err
	}
	defer client.Close()
	if c.follow {
		return followTrace(ctx, client, in, c.std.out)
	}
	res, err := c.op.Run(ctx, client, in)
	if err != nil {
		return numberHint(c.op, err)
	}
	return c.show(res)
}

// show prints a result, and turns a build's state into the exit status
// when --exit-status asks.
func (c *opCmd) show(res ops.Result) error {
	var err error
	switch {
	case res.Write != nil:
		err = writeBuffered(c.std.out, res.Write)
	case res.Items != nil:
		err = c.out.printList(c.std, c.op, res.Items, c.list.limit())
	case res.Record != nil:
		err = c.out.printRecord(c.std, c.op, res.Record)
	default:
		if isTerminal(c.std.err) {
			fmt.Fprintf(c.std.err, "collab: %s: done\n", c.op.Name())
		}
	}
	if err == nil && c.exitStatus {
		switch {
		case res.Pending:
			return exitError{exitPending}
		case res.Failed:
			return exitError{exitFail}
		}
	}
	return err
}

// writeBuffered runs write on a buffered stdout.
func writeBuffered(out io.Writer, write func(io.Writer) error) error {
	w := newOutWriter(out)
	err := write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// joinJSONFields lets "--json a,b" name fields, as gh's users write it,
// although --json alone means every field: a bare --json followed by a word
// made only of the record's field names becomes --json=a,b. Anything else
// after it stays an argument.
func joinJSONFields(root *cobra.Command, args []string) []string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd.Flags().Lookup("json") == nil {
		return args
	}
	op := opOf(cmd)
	if op == nil || op.Record == nil {
		return args
	}
	known := ops.FieldNames(op.Record)
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		// Without positional arguments a word after --json can only be
		// fields: joined, a wrong one is reported as such.
		if args[i] == "--json" && i+1 < len(args) && (allKnown(args[i+1], known) || countPositional(op) == 0 && fieldList.MatchString(args[i+1])) {
			out = append(out, "--json="+args[i+1])
			i++
			continue
		}
		if args[i] == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, args[i])
	}
	return out
}

// fieldList matches what looks like a list of field names.
var fieldList = regexp.MustCompile(`^[a-z_?]+(,[a-z_?]+)*$`)

// allKnown reports whether list is a comma-separated list of names in known.
func allKnown(list string, known []string) bool {
	for _, f := range strings.Split(list, ",") {
		if !slices.Contains(known, strings.TrimSpace(f)) {
			return false
		}
	}
	return true
}

// opAnnotation is the annotation that names a typed command's operation.
const opAnnotation = "collab-op"

// opOf is the operation a typed command runs, or nil.
func opOf(cmd *cobra.Command) *ops.Op {
	noun, verb, ok := strings.Cut(cmd.Annotations[opAnnotation], " ")
	if !ok {
		return nil
	}
	return ops.Lookup(noun, verb)
}
