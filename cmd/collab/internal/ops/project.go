package ops

import (
	"context"
	"iter"
	"os"
	"path/filepath"

	"github.com/collabsvc/collab"
)

var projectFields = []string{"id", "path_with_namespace", "visibility_level", "default_branch", "web_url"}

var projectHelp = map[string]string{"name": "the `NAME`", "path": "the `PATH` in its namespace (default from the name)",
	"namespace_id": "create it in the namespace (group) with this `ID`", "description": "the description (`TEXT`)",
	"visibility_level": "0 private, 10 internal, 20 public", "import_url": "import the repository at `URL`",
	"default_branch": "the default `BRANCH`"}

// projectScopes are the project lists by which projects they hold.
var projectScopes = map[string]struct {
	sdk  string
	list func(*collab.ProjectsService, context.Context, *collab.ListProjectsOptions, ...collab.IterOption) iter.Seq2[*collab.Project, error]
}{
	"member":  {"Projects.All", (*collab.ProjectsService).All},
	"owned":   {"Projects.AllOwned", (*collab.ProjectsService).AllOwned},
	"starred": {"Projects.AllStarred", (*collab.ProjectsService).AllStarred},
	"all":     {"Projects.AllEvery", (*collab.ProjectsService).AllEvery},
}

var projectOps = []*Op{
	{
		Noun: "project", Verb: "list", Summary: "List projects: yours, owned, starred, or every project (administrators)",
		Args: []Arg{
			{Name: "scope", Kind: KindString, Enum: []string{"member", "owned", "starred", "all"}, Help: "which projects: member (default), owned, starred or all"},
			{Name: "search", Kind: KindString, Help: "only projects whose name matches `TEXT`"},
			{Name: "archived", Kind: KindBool, Help: "only archived projects"},
			{Name: "visibility", Kind: KindString, Enum: []string{"public", "internal", "private"}, Help: "only projects with this `VISIBILITY`"},
			{Name: "order_by", Kind: KindString, Enum: []string{"id", "name", "path", "created_at", "updated_at", "last_activity_at"}, Help: "order by `FIELD`"},
			sortArg},
		Idempotent: true, SDK: []string{"Projects.All", "Projects.AllOwned", "Projects.AllStarred", "Projects.AllEvery"},
		Record: RecordOf[collab.Project](), List: true, Fields: projectFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			scope := projectScopes[cmpOr(in.String("scope"), "member")]
			return Many(scope.list(c.Projects, ctx, &collab.ListProjectsOptions{
				Search: Ptr[string](in, "search"), Archived: Ptr[bool](in, "archived"), Visibility: Ptr[string](in, "visibility"),
				OrderBy: Ptr[collab.ProjectOrderBy](in, "order_by"), Sort: Ptr[collab.SortOrder](in, "sort"),
			}, in.IterOptions()...))
		},
	},
	{
		Noun: "project", Verb: "search", Summary: "Find projects by name",
		Args: []Arg{{Name: "query", Kind: KindString, Required: true, Positional: true, Help: "the `TEXT` to look for"},
			{Name: "order_by", Kind: KindString, Enum: []string{"id", "name", "created_at", "last_activity_at"}, Help: "order by `FIELD`"}, sortArg},
		Idempotent: true, SDK: []string{"Projects.AllSearch"},
		Record: RecordOf[collab.Project](), List: true, Fields: projectFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Projects.AllSearch(ctx, in.String("query"), &collab.SearchProjectsOptions{
				OrderBy: Ptr[collab.ProjectOrderBy](in, "order_by"), Sort: Ptr[collab.SortOrder](in, "sort")}, in.IterOptions()...))
		},
	},
	{
		Noun: "project", Verb: "view", Summary: "Show a project",
		Args: []Arg{positional(ProjectArg)}, Idempotent: true, SDK: []string{"Projects.Get"},
		Record: RecordOf[collab.Project](), Fields: append(projectFields, "description", "http_url_to_repo"),
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Projects.Get(ctx, in.Project()))
		},
	},
	{
		Noun: "project", Verb: "create", Summary: "Create a project, yours or (administrators) another user's",
		Args: append(fieldArgs[collab.CreateProjectOptions](projectHelp),
			Arg{Name: "for_user", Kind: KindInt, Help: "create it for the user with this `ID` (administrators)"}),
		Writes: true, SDK: []string{"Projects.Create", "Projects.CreateForUser"},
		Record: RecordOf[collab.Project](), Fields: projectFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			opt := fill[collab.CreateProjectOptions](in)
			if in.Has("for_user") {
				return One(c.Projects.CreateForUser(ctx, in.Int("for_user"), opt))
			}
			return One(c.Projects.Create(ctx, opt))
		},
	},
	{
		Noun: "project", Verb: "edit", Summary: "Change a project's settings",
		Args:   append([]Arg{ProjectArg}, fieldArgs[collab.UpdateProjectOptions](projectHelp)...),
		Writes: true, Idempotent: true, SDK: []string{"Projects.Update"},
		Record: RecordOf[collab.Project](), Fields: projectFields,
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Projects.Update(ctx, in.Project(), fill[collab.UpdateProjectOptions](in)))
		},
	},
	{
		Noun: "project", Verb: "delete", Summary: "Delete a project",
		Args: []Arg{positional(ProjectArg)}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Projects.Delete"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.Projects.Delete(ctx, in.Project()))
		},
	},
	projectCall("fork", "Fork a project into your namespace", false, "Projects.Fork", (*collab.ProjectsService).Fork),
	projectCall("star", "Star a project", true, "Projects.Star", (*collab.ProjectsService).Star),
	projectCall("unstar", "Unstar a project", true, "Projects.Unstar", (*collab.ProjectsService).Unstar),
	projectCall("archive", "Archive a project (read-only from then on)", true, "Projects.Archive", (*collab.ProjectsService).Archive),
	projectCall("unarchive", "Unarchive a project", true, "Projects.Unarchive", (*collab.ProjectsService).Unarchive),
	{
		Noun: "project", Verb: "share", Summary: "Share a project with a group",
		Args: []Arg{ProjectArg,
			{Name: "group_id", Kind: KindInt, Required: true, Help: "the group's `ID`"},
			{Name: "access", Kind: KindString, Required: true, Enum: accessNames, Help: "the group's access: guest, reporter, developer, master or owner"}},
		Writes: true, Idempotent: true, SDK: []string{"Projects.Share"},
		Record: RecordOf[collab.ProjectShare](), Fields: []string{"id", "project_id", "group_id", "group_access"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Projects.Share(ctx, in.Project(), &collab.ShareProjectOptions{GroupID: in.Int("group_id"), GroupAccess: accessLevel(in, "access")}))
		},
	},
	{
		Noun: "project", Verb: "upload", Summary: "Upload a file to a project, for a link in Markdown",
		Args:   []Arg{ProjectArg, {Name: "file", Kind: KindString, Required: true, Positional: true, Help: "the `FILE` to upload"}},
		Writes: true, LocalFiles: true, SDK: []string{"Projects.UploadFile"},
		Record: RecordOf[collab.ProjectFile](), Fields: []string{"url", "markdown"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			f, err := os.Open(in.String("file"))
			if err != nil {
				return Result{}, err
			}
			defer f.Close()
			return One(c.Projects.UploadFile(ctx, in.Project(), f, filepath.Base(f.Name())))
		},
	},
	{
		Noun: "project", Verb: "events", Summary: "List a project's events, newest first",
		Args: []Arg{ProjectArg}, Idempotent: true, SDK: []string{"Projects.AllEvents"},
		Record: RecordOf[collab.ProjectEvent](), List: true, Fields: []string{"created_at", "author_username", "action_name", "target_type", "target_title"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Many(c.Projects.AllEvents(ctx, in.Project(), nil, in.IterOptions()...))
		},
	},
	{
		Noun: "project", Verb: "fork-relation", Summary: "Mark a project as a fork of another (administrators)",
		Args:   []Arg{ProjectArg, {Name: "forked_from", Kind: KindInt, Required: true, Help: "the `ID` of the project it is a fork of"}},
		Writes: true, SDK: []string{"Projects.CreateForkRelation"},
		Record: RecordOf[collab.ForkRelation](), Fields: []string{"id", "forked_to_project_id", "forked_from_project_id"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return One(c.Projects.CreateForkRelation(ctx, in.Project(), in.Int("forked_from")))
		},
	},
	{
		Noun: "project", Verb: "unfork-relation", Summary: "Remove a project's fork relation (administrators)",
		Args: []Arg{ProjectArg}, Writes: true, Idempotent: true, Destructive: true, SDK: []string{"Projects.DeleteForkRelation"},
		Run: func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
			return Done(c.Projects.DeleteForkRelation(ctx, in.Project()))
		},
	},
}

// projectCall is an operation that makes one call on a project and
// returns it; an idempotent one takes the server's 304 (already starred)
// as done, and then reads the project.
func projectCall(verb, summary string, idempotent bool, sdk string, call func(*collab.ProjectsService, context.Context, any) (*collab.Project, *collab.Response, error)) *Op {
	op := &Op{
		Noun: "project", Verb: verb, Summary: summary, Args: []Arg{positional(ProjectArg)},
		Writes: true, Idempotent: idempotent, SDK: []string{sdk, "Projects.Get"},
		Record: RecordOf[collab.Project](), Fields: projectFields,
	}
	op.Run = func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		p, resp, err := call(c.Projects, ctx, in.Project())
		if idempotent {
			return orGet(func() (*collab.Project, *collab.Response, error) { return c.Projects.Get(ctx, in.Project()) })(p, resp, err)
		}
		return One(p, resp, err)
	}
	return op
}

// accessNames are the access levels by name.
var accessNames = []string{"guest", "reporter", "developer", "master", "owner"}

// accessLevel is the access level the argument name gives by its name.
func accessLevel(in Input, name string) collab.AccessLevel {
	levels := map[string]collab.AccessLevel{"guest": collab.GuestAccess, "reporter": collab.ReporterAccess,
		"developer": collab.DeveloperAccess, "master": collab.MasterAccess, "owner": collab.OwnerAccess}
	return levels[in.String(name)]
}

// cmpOr is s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
