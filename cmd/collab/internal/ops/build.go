package ops

import (
	"context"
	"io"

	"github.com/collabsvc/collab"
)

var buildArg = Arg{Name: "build", Kind: KindInt, Required: true, Positional: true, Help: "the build's `ID`"}

// buildFields are the columns of a build.
var buildFields = []string{"id", "name", "stage", "status", "ref", "commit.short_id", "created_at"}

var buildScopes = []string{"pending", "running", "success", "failed", "canceled", "skipped"}

var buildOps = []*Op{
	{
		Noun: "build", Verb: "list", Summary: "List a project's builds, newest first, or a commit's",
		Args: []Arg{ProjectArg,
			{Name: "status", Kind: KindStrings, Enum: buildScopes, Help: "only builds with one of these `STATUSES`"},
			{Name: "commit", Kind: KindString, Help: "only the builds of the commit `SHA`"}},
		Idempotent: true, SDK: []string{"Builds.All", "Builds.AllForCommit"},
		Record: RecordOf[collab.Build](), List: true, Fields: buildFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			var scope collab.BuildScopes
			for _, s := range in.Strings("status") {
				scope = append(scope, collab.BuildStatus(s))
			}
			if sha := in.String("commit"); sha != "" {
				return Many(c.Builds.AllForCommit(ctx, in.Project(), sha, &collab.ListBuildsForCommitOptions{Scope: scope}, in.IterOptions()...))
			}
			return Many(c.Builds.All(ctx, in.Project(), &collab.ListBuildsOptions{Scope: scope}, in.IterOptions()...))
		},
	},
	{
		Noun: "build", Verb: "view", Summary: "Show a build",
		Help: "With --exit-status the command exits 8 while the build is pending or running, and 1 when it failed or was canceled.",
		Args: []Arg{ProjectArg, buildArg}, Idempotent: true, SDK: []string{"Builds.Get"},
		Record: RecordOf[collab.Build](), Fields: append(buildFields, "started_at", "finished_at", "user.username"), Status: true,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			b, _, err := c.Builds.Get(ctx, in.Project(), in.Int("build"))
			if err != nil {
				return Result{}, err
			}
			return buildResult(b), nil
		},
	},
	{
		Noun: "build", Verb: "trace", Summary: "Print a build's log",
		Help: "With --follow it prints what the build appends until the build finishes.",
		Args: []Arg{ProjectArg, buildArg}, Idempotent: true, SDK: []string{"Builds.OpenTrace"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Result{Write: func(w io.Writer) error {
				return copyDownload(w)(c.Builds.OpenTrace(ctx, in.Project(), in.Int("build")))
			}}, nil
		},
	},
	{
		Noun: "build", Verb: "artifacts", Summary: "Write a build's artifacts archive to standard output",
		Args: []Arg{ProjectArg, buildArg}, Idempotent: true, Binary: true, SDK: []string{"Builds.OpenArtifacts"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Result{Write: func(w io.Writer) error {
				return copyDownload(w)(c.Builds.OpenArtifacts(ctx, in.Project(), in.Int("build")))
			}}, nil
		},
	},
	buildCall("retry", "Run a build again (a new build)", false, "Builds.Retry", (*collab.BuildsService).Retry),
	buildCall("cancel", "Cancel a pending or running build", false, "Builds.Cancel", (*collab.BuildsService).Cancel),
	buildCall("erase", "Erase a build's log and artifacts", true, "Builds.Erase", (*collab.BuildsService).Erase),
	buildCall("keep", "Keep a build's artifacts past their expiry", false, "Builds.KeepArtifacts", (*collab.BuildsService).KeepArtifacts),
}

// buildCall is an operation that makes one call on a build.
func buildCall(verb, summary string, destructive bool, sdk string, call func(*collab.BuildsService, context.Context, any, int) (*collab.Build, *collab.Response, error)) *Op {
	return &Op{
		Noun: "build", Verb: verb, Summary: summary, Args: []Arg{ProjectArg, buildArg},
		Writes: true, Idempotent: verb != "retry", Destructive: destructive, SDK: []string{sdk},
		Record: RecordOf[collab.Build](), Fields: buildFields, Status: true,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			b, _, err := call(c.Builds, ctx, in.Project(), in.Int("build"))
			if err != nil {
				return Result{}, err
			}
			return buildResult(b), nil
		},
	}
}

// buildResult is a build with its state.
func buildResult(b *collab.Build) Result {
	return Result{Record: b,
		Pending: b.Status == collab.BuildPending || b.Status == collab.BuildRunning,
		Failed:  b.Status == collab.BuildFailed || b.Status == collab.BuildCanceled}
}

// copyDownload copies a download to w and closes it.
func copyDownload(w io.Writer) func(*collab.Download, *collab.Response, error) error {
	return func(d *collab.Download, _ *collab.Response, err error) error {
		if err != nil {
			return err
		}
		defer d.Close()
		_, err = io.Copy(w, d)
		return err
	}
}
