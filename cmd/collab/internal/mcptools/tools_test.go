package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
	"github.com/collabsvc/collab/collabtest"
)

// seeded are the records every tool of TestEveryTool acts on, in the
// project alice/webshop unless said otherwise.
type seeded struct {
	issue, issue2 int // ids of #1 and #2
	note, note2   int // comments on #1
	build         int // a failed build with a trace
	running       int // a running build
	hook, hook2   int
	milestone     int
	award         int // an emoji on #1
	group, group2 int // acme (with alice/spare in it later) and spare-group
	other         int // alice/other, a project to delete, move to and fork
	groupProject  int // acme/tools
	mrNote        int // a comment on !1
	forkable      int // bob/forkable, public
	forkOf        int // alice/fork-me, to mark as a fork of forkable
}

// seed fills the world with what every tool needs.
func (w *world) seed() seeded {
	t, f := w.t, w.fake
	ctx := context.Background()
	var s seeded
	admin, err := collab.NewClient(f.URL, collab.WithPrivateToken(f.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bug", "old", "ui"} {
		if _, _, err := admin.Labels.Create(ctx, w.project, &collab.CreateLabelOptions{Name: name, Color: "#d9534f"}); err != nil {
			t.Fatal(err)
		}
	}
	issue := f.Seed.Issue(w.p, w.bob, "Crash on save", f.Seed.Label(w.p, "bug", "#d9534f"))
	s.issue = issue.ID
	s.issue2 = f.Seed.Issue(w.p, w.alice, "Old idea").ID
	s.note = f.Seed.IssueNote(issue, w.bob, "Same here").ID
	s.note2 = f.Seed.IssueNote(issue, w.bob, "+1").ID
	f.Seed.Branch(w.p, "feature")
	f.Seed.Branch(w.p, "feature2")
	f.Seed.Branch(w.p, "feature3")
	mr := f.Seed.MergeRequest(w.p, w.alice, "feature", "master", "Add search")
	f.Seed.MergeRequest(w.p, w.alice, "feature2", "master", "Drop me")
	s.mrNote = f.Seed.MergeRequestNote(mr, w.bob, "Looks good").ID
	s.build = f.Seed.Build(w.p, collabtest.BuildSpec{Name: "test", Status: "failed", Trace: "compiling\nFAIL: TestSave\n", Artifacts: []byte("PK\x03\x04\x00\x00binary")}).ID
	s.running = f.Seed.Build(w.p, collabtest.BuildSpec{Name: "lint", Status: "running"}).ID
	h, _, err := admin.Hooks.Add(ctx, w.project, &collab.AddHookOptions{URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	h2, _, err := admin.Hooks.Add(ctx, w.project, &collab.AddHookOptions{URL: "https://example.com/old"})
	if err != nil {
		t.Fatal(err)
	}
	s.hook, s.hook2 = h.ID, h2.ID
	m, _, err := admin.Milestones.Create(ctx, w.project, &collab.CreateMilestoneOptions{Title: "v1.0"})
	if err != nil {
		t.Fatal(err)
	}
	s.milestone = m.ID
	a, _, err := admin.AwardEmoji.CreateIssueAward(ctx, w.project, s.issue, "thumbsup")
	if err != nil {
		t.Fatal(err)
	}
	s.award = a.ID
	acme := f.Seed.Group(w.alice, "Acme", "acme", collab.PublicVisibility)
	s.group = acme.ID
	s.group2 = f.Seed.Group(w.alice, "Spare", "spare-group", collab.PublicVisibility).ID
	s.groupProject = f.Seed.GroupProject(acme, w.alice, "tools", collab.PublicVisibility).ID
	s.other = f.Seed.Project(w.alice, "other", collab.PublicVisibility).ID
	s.forkable = f.Seed.Project(w.bob, "forkable", collab.PublicVisibility).ID
	s.forkOf = f.Seed.Project(w.alice, "fork-me", collab.PublicVisibility).ID
	return s
}

// toolCase is one call of a tool with valid arguments: the request it
// must make and what its answer must say.
type toolCase struct {
	tool string
	args map[string]any
	req  string // "METHOD /path" under /api/v3, the path escaped; a query may follow after "?"
	// want are key=value pairs of the structured answer (of its first
	// item for a list), or a piece of the text for a text answer.
	want []string
}

func TestEveryTool(t *testing.T) {
	w := newWorld(t, Selection{Toolsets: []string{"all"}}, func(o *Options) {})
	w.useAdmin()
	s := w.seed()
	p := "alice/webshop"
	pe := "/projects/alice%2Fwebshop"
	id := strconv.Itoa
	cases := []toolCase{
		{"branch_list", m("project", p), "GET " + pe + "/repository/branches", []string{"name=feature"}},
		{"branch_view", m("project", p, "branch", "feature"), "GET " + pe + "/repository/branches/feature", []string{"name=feature"}},
		{"branch_protect", m("project", p, "branch", "feature"), "PUT " + pe + "/repository/branches/feature/protect", []string{"protected=true"}},
		{"branch_unprotect", m("project", p, "branch", "feature"), "PUT " + pe + "/repository/branches/feature/unprotect", []string{"protected=false"}},
		{"branch_create", m("project", p, "branch", "hotfix", "ref", "master"), "POST " + pe + "/repository/branches", []string{"name=hotfix"}},
		{"branch_delete", m("project", p, "branch", "hotfix"), "DELETE " + pe + "/repository/branches/hotfix", []string{"done=true"}},

		{"build_list", m("project", p), "GET " + pe + "/builds", []string{"name=lint", "status=running"}},
		{"build_list", m("project", p, "status", []any{"failed", "running"}), "GET " + pe + "/builds?scope[0]=failed&scope[1]=running", []string{"name=lint"}},
		{"build_view", m("project", p, "build", s.build), "GET " + pe + "/builds/" + id(s.build), []string{"name=test"}},
		{"build_trace", m("project", p, "build", s.build), "GET " + pe + "/builds/" + id(s.build) + "/trace", []string{"FAIL: TestSave"}},
		{"build_retry", m("project", p, "build", s.build), "POST " + pe + "/builds/" + id(s.build) + "/retry", []string{"status=pending"}},
		{"build_cancel", m("project", p, "build", s.running), "POST " + pe + "/builds/" + id(s.running) + "/cancel", []string{"status=canceled"}},
		{"build_keep", m("project", p, "build", s.build), "POST " + pe + "/builds/" + id(s.build) + "/artifacts/keep", []string{"name=test"}},
		{"build_erase", m("project", p, "build", s.build), "POST " + pe + "/builds/" + id(s.build) + "/erase", []string{"name=test"}},

		{"emoji_list", m("project", p, "issue", 1), "GET " + pe + "/issues/" + id(s.issue) + "/award_emoji", []string{"name=thumbsup"}},
		{"emoji_view", m("project", p, "issue", 1, "award", s.award), "GET " + pe + "/issues/" + id(s.issue) + "/award_emoji/" + id(s.award), []string{"name=thumbsup"}},
		{"emoji_add", m("project", p, "merge_request", 1, "name", "tada"), "POST " + pe + "/merge_requests/", []string{"name=tada"}},
		{"emoji_remove", m("project", p, "issue", 1, "award", s.award), "DELETE " + pe + "/issues/" + id(s.issue) + "/award_emoji/" + id(s.award), nil},

		{"group_list", m("search", "acme"), "GET /groups?search=acme", []string{"path=acme"}},
		{"group_view", m("group", "acme"), "GET /groups/acme", []string{"path=acme"}},
		{"group_create", m("name", "New", "path", "new-group"), "POST /groups", []string{"path=new-group"}},
		{"group_edit", m("group", "acme", "description", "Tools"), "PUT /groups/acme", []string{"path=acme"}},
		{"group_projects", m("group", "acme"), "GET /groups/acme/projects", []string{"path_with_namespace=acme/tools"}},
		{"group_transfer", m("group", "acme", "project_id", s.other), "POST /groups/acme/projects/" + id(s.other), []string{"path=acme"}},
		{"group_delete", m("group", "spare-group"), "DELETE /groups/spare-group", nil},

		{"hook_list", m("project", p), "GET " + pe + "/hooks", []string{"url=https://example.com/hook"}},
		{"hook_view", m("project", p, "hook", s.hook), "GET " + pe + "/hooks/" + id(s.hook), []string{"url=https://example.com/hook"}},
		{"hook_create", m("project", p, "url", "https://example.com/new", "issues_events", true), "POST " + pe + "/hooks", []string{"url=https://example.com/new"}},
		{"hook_edit", m("project", p, "hook", s.hook, "url", "https://example.com/moved"), "PUT " + pe + "/hooks/" + id(s.hook), []string{"url=https://example.com/moved"}},
		{"hook_delete", m("project", p, "hook", s.hook2), "DELETE " + pe + "/hooks/" + id(s.hook2), nil},

		{"issue_list", m("project", p, "labels", []any{"bug"}), "GET " + pe + "/issues?labels=bug", []string{"iid=1", "title=Crash on save", "author.username=bob"}},
		{"issue_view", m("project", p, "issue", 1), "GET " + pe + "/issues?iid=1", []string{"title=Crash on save"}},
		{"issue_create", m("project", p, "title", "Slow search", "labels", []any{"ui"}), "POST " + pe + "/issues", []string{"title=Slow search", "labels=[ui]"}},
		{"issue_list_mine", m("state", "opened"), "GET /issues?state=opened", []string{"title=Slow search"}},
		{"issue_edit", m("project", p, "issue", 1, "add_labels", []any{"ui"}), "PUT " + pe + "/issues/" + id(s.issue), []string{"labels=[bug ui]"}},
		{"issue_close", m("project", p, "issue", 1), "PUT " + pe + "/issues/" + id(s.issue), []string{"state=closed"}},
		{"issue_reopen", m("project", p, "issue", 1), "PUT " + pe + "/issues/" + id(s.issue), []string{"state=opened"}},
		{"issue_comment", m("project", p, "issue", 1, "body", "Fixed in !1"), "POST " + pe + "/issues/" + id(s.issue) + "/notes", []string{"author.username=root"}},
		{"issue_subscribe", m("project", p, "issue", 2), "POST " + pe + "/issues/" + id(s.issue2) + "/subscription", []string{"iid=2"}},
		{"issue_unsubscribe", m("project", p, "issue", 2), "DELETE " + pe + "/issues/" + id(s.issue2) + "/subscription", []string{"iid=2"}},
		{"issue_move", m("project", p, "issue", 2, "to", "bob/forkable"), "POST " + pe + "/issues/" + id(s.issue2) + "/move", []string{"project_id=" + id(s.forkable)}},
		{"issue_delete", m("project", p, "issue", 3), "DELETE " + pe + "/issues/", []string{"done=true"}},

		{"label_list", m("project", p), "GET " + pe + "/labels", []string{"name=bug"}},
		{"label_create", m("project", p, "name", "docs", "color", "#5cb85c"), "POST " + pe + "/labels", []string{"name=docs"}},
		{"label_edit", m("project", p, "name", "docs", "color", "#000000", "description", "Documentation"), "PUT " + pe + "/labels", []string{"description=Documentation"}},
		{"label_subscribe", m("project", p, "name", "docs"), "POST " + pe + "/labels/", []string{"name=docs"}},
		{"label_unsubscribe", m("project", p, "name", "docs"), "DELETE " + pe + "/labels/", []string{"name=docs"}},
		{"label_delete", m("project", p, "name", "old"), "DELETE " + pe + "/labels?name=old", []string{"title=old"}},

		{"member_list", m("project", p), "GET " + pe + "/members", []string{"username=alice"}},
		{"member_view", m("project", p, "user", w.bob.ID), "GET " + pe + "/members/" + id(w.bob.ID), []string{"username=bob", "access_level=20"}},
		{"member_edit", m("project", p, "user", w.bob.ID, "access", "developer"), "PUT " + pe + "/members/" + id(w.bob.ID), []string{"access_level=30"}},
		{"member_add", m("group", "acme", "user", w.bob.ID, "access", "reporter"), "POST /groups/acme/members", []string{"username=bob"}},
		{"member_remove", m("group", "acme", "user", w.bob.ID), "DELETE /groups/acme/members/" + id(w.bob.ID), nil},

		{"milestone_list", m("project", p), "GET " + pe + "/milestones", []string{"title=v1.0"}},
		{"milestone_view", m("project", p, "milestone", s.milestone), "GET " + pe + "/milestones/" + id(s.milestone), []string{"title=v1.0"}},
		{"milestone_create", m("project", p, "title", "v2.0"), "POST " + pe + "/milestones", []string{"title=v2.0"}},
		{"milestone_edit", m("project", p, "milestone", s.milestone, "state_event", "close"), "PUT " + pe + "/milestones/" + id(s.milestone), []string{"state=closed"}},
		{"milestone_issues", m("project", p, "milestone", s.milestone), "GET " + pe + "/milestones/" + id(s.milestone) + "/issues", nil},

		{"mr_list", m("project", p, "state", "opened"), "GET " + pe + "/merge_requests?state=opened", []string{"source_branch=feature2"}},
		{"mr_view", m("project", p, "merge_request", 1), "GET " + pe + "/merge_requests?iid=1", []string{"title=Add search"}},
		{"mr_diff", m("project", p, "merge_request", 1), "GET " + pe + "/merge_requests/", nil},
		{"mr_commits", m("project", p, "merge_request", 1), "GET " + pe + "/merge_requests/", nil},
		{"mr_closes", m("project", p, "merge_request", 1), "GET " + pe + "/merge_requests/", nil},
		{"mr_create", m("project", p, "source_branch", "feature3", "target_branch", "master", "title", "Search v2"), "POST " + pe + "/merge_requests", []string{"title=Search v2"}},
		{"mr_edit", m("project", p, "merge_request", 1, "title", "Add fast search"), "PUT " + pe + "/merge_requests/", []string{"title=Add fast search"}},
		{"mr_comment", m("project", p, "merge_request", 1, "body", "Ship it"), "POST " + pe + "/merge_requests/", []string{"author.username=root"}},
		{"mr_subscribe", m("project", p, "merge_request", 2), "POST " + pe + "/merge_requests/", []string{"iid=2"}},
		{"mr_unsubscribe", m("project", p, "merge_request", 2), "DELETE " + pe + "/merge_requests/", []string{"iid=2"}},
		{"mr_merge", m("project", p, "merge_request", 1, "when_build_succeeds", true), "PUT " + pe + "/merge_requests/", []string{"iid=1"}},
		{"mr_cancel_merge", m("project", p, "merge_request", 1), "PUT " + pe + "/merge_requests/", []string{"iid=1"}},
		{"mr_close", m("project", p, "merge_request", 2), "PUT " + pe + "/merge_requests/", []string{"state=closed"}},
		{"mr_reopen", m("project", p, "merge_request", 2), "PUT " + pe + "/merge_requests/", []string{"state=reopened"}},
		{"mr_delete", m("project", p, "merge_request", 2), "DELETE " + pe + "/merge_requests/", []string{"done=true"}},

		{"note_list", m("project", p, "issue", 1), "GET " + pe + "/issues/" + id(s.issue) + "/notes", []string{"body=Same here"}},
		{"note_view", m("project", p, "issue", 1, "note", s.note), "GET " + pe + "/issues/" + id(s.issue) + "/notes/" + id(s.note), []string{"body=Same here"}},
		{"note_edit", m("project", p, "merge_request", 1, "note", s.mrNote, "body", "Looks great"), "PUT " + pe + "/merge_requests/", []string{"body=Looks great"}},
		{"note_import", m("project", p, "issue", 1, "body", "From the old tracker", "created_at", "2016-01-02T03:04:05Z"), "POST " + pe + "/issues/" + id(s.issue) + "/notes", []string{"body=From the old tracker"}},
		{"note_delete", m("project", p, "issue", 1, "note", s.note2), "DELETE " + pe + "/issues/" + id(s.issue) + "/notes/" + id(s.note2), nil},

		{"project_list", m("scope", "all", "search", "webshop"), "GET /projects/all?search=webshop", []string{"path_with_namespace=alice/webshop"}},
		{"project_search", m("query", "forkable"), "GET /projects/search/forkable", []string{"path_with_namespace=bob/forkable"}},
		{"project_view", m("project", p), "GET " + pe, []string{"path_with_namespace=alice/webshop"}},
		{"project_create", m("name", "Blog"), "POST /projects", []string{"path_with_namespace=root/blog"}},
		{"project_edit", m("project", p, "description", "The shop", "fields", []any{"description"}), "PUT " + pe, []string{"description=The shop"}},
		{"project_fork", m("project", "bob/forkable"), "POST /projects/fork/bob%2Fforkable", []string{"path_with_namespace=root/forkable"}},
		{"project_star", m("project", p), "POST " + pe + "/star", []string{"path_with_namespace=alice/webshop"}},
		{"project_unstar", m("project", p), "DELETE " + pe + "/star", []string{"path_with_namespace=alice/webshop"}},
		{"project_archive", m("project", p, "fields", []any{"archived"}), "POST " + pe + "/archive", []string{"archived=true"}},
		{"project_unarchive", m("project", p, "fields", []any{"archived"}), "POST " + pe + "/unarchive", []string{"archived=false"}},
		{"project_share", m("project", p, "group_id", s.group, "access", "developer"), "POST " + pe + "/share", nil},
		{"project_events", m("project", p), "GET " + pe + "/events", nil},
		{"project_fork_relation", m("project", "alice/fork-me", "forked_from", s.forkable), "POST /projects/alice%2Ffork-me/fork/" + id(s.forkable), nil},
		{"project_unfork_relation", m("project", "alice/fork-me"), "DELETE /projects/alice%2Ffork-me/fork", []string{"done=true"}},
		{"project_delete", m("project", "alice/fork-me"), "DELETE /projects/alice%2Ffork-me", []string{"done=true"}},

		{"settings_view", m(), "GET /application/settings", []string{"signup_enabled=true"}},
		{"settings_edit", m("sign_in_text", "Welcome", "fields", []any{"sign_in_text"}), "PUT /application/settings", []string{"sign_in_text=Welcome"}},
		{"settings_queues", m(), "GET /jobqueue/queue_metrics", nil},
		{"settings_processes", m(), "GET /jobqueue/process_metrics", nil},
		{"settings_jobs", m(), "GET /jobqueue/job_stats", nil},
		{"settings_job_metrics", m(), "GET /jobqueue/compound_metrics", nil},

		{"user_me", m(), "GET /user", []string{"username=root"}},
		{"user_list", m("username", "bob"), "GET /users?username=bob", []string{"username=bob"}},
		{"user_view", m("user", w.bob.ID), "GET /users/" + id(w.bob.ID), []string{"username=bob"}},
	}
	s.issue3(w)
	outputs := map[string]*jsonschema.Resolved{}
	for _, tool := range w.tools() {
		if tool.OutputSchema == nil {
			continue
		}
		raw, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var schema jsonschema.Schema
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		if outputs[tool.Name], err = schema.Resolve(nil); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
	}
	called := map[string]bool{}
	for _, c := range cases {
		called[c.tool] = true
		t.Run(c.tool, func(t *testing.T) {
			w.t = t
			res := w.call(c.tool, c.args)
			if res.IsError {
				t.Fatalf("error answer: %s", text(res))
			}
			w.sawRequest(c.req)
			if res.StructuredContent == nil {
				for _, piece := range c.want {
					if !strings.Contains(text(res), piece) {
						t.Errorf("text answer lacks %q:\n%s", piece, text(res))
					}
				}
				return
			}
			checkAnswer(t, res.StructuredContent, c.want)
			var answer any
			raw, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(raw, &answer); err != nil {
				t.Fatal(err)
			}
			if err := outputs[c.tool].Validate(answer); err != nil {
				t.Errorf("the answer does not fit the output schema: %v\n%s", err, raw)
			}
		})
	}
	for _, tool := range w.tools() {
		if !called[tool.Name] {
			t.Errorf("tool %s is not called", tool.Name)
		}
	}
}

// issue3 seeds issue #3, for issue_delete.
func (s seeded) issue3(w *world) { w.fake.Seed.Issue(w.p, w.alice, "Spam") }

// useAdmin makes the world's client act as the fake's administrator.
func (w *world) useAdmin() {
	w.t.Helper()
	c, err := collab.NewClient(w.fake.URL, collab.WithPrivateToken(w.fake.AdminToken), collab.WithHTTPClient(HTTPClient(w.rec)))
	if err != nil {
		w.t.Fatal(err)
	}
	specs, err := Selection{Toolsets: []string{"all"}}.Select(FromOps(ops.All()))
	if err != nil {
		w.t.Fatal(err)
	}
	srv, err := NewServer(specs, Options{Client: c, Token: w.fake.AdminToken})
	if err != nil {
		w.t.Fatal(err)
	}
	w.client, w.token, w.session = c, w.fake.AdminToken, connect(w.t, srv)
}

// sawRequest fails unless the last call sent want: "METHOD /path" under
// /api/v3 (a prefix of the escaped path when it ends in "/"), then the
// query values it must carry after "?".
func (w *world) sawRequest(want string) {
	w.t.Helper()
	method, rest, _ := strings.Cut(want, " ")
	path, query, _ := strings.Cut(rest, "?")
	reqs := w.rec.take()
	for _, r := range reqs {
		p := strings.TrimPrefix(r.Path, "/api/v3")
		if r.Method != method || !(p == path || strings.HasSuffix(path, "/") && strings.HasPrefix(p, path)) {
			continue
		}
		if query == "" || hasValues(r, query) {
			return
		}
	}
	var got []string
	for _, r := range reqs {
		got = append(got, fmt.Sprintf("%s %s?%s form %v", r.Method, r.Path, r.Query.Encode(), r.Form))
	}
	w.t.Errorf("no request %s among:\n%s", want, strings.Join(got, "\n"))
}

// hasValues says whether r's query or form holds every value of query.
func hasValues(r sent, query string) bool {
	for _, kv := range strings.Split(query, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if !slices.Contains(r.Query[k], v) && !slices.Contains(r.Form[k], v) {
			return false
		}
	}
	return true
}

// checkAnswer checks key=value pairs of a structured answer (of its first
// item for a page); a key may be a dotted path.
func checkAnswer(t *testing.T, structured any, want []string) {
	t.Helper()
	raw, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	if items, ok := v["items"].([]any); ok {
		if _, hasTrunc := v["truncated"]; hasTrunc && len(want) > 0 {
			if len(items) == 0 {
				t.Fatalf("empty page: %s", raw)
			}
			v = items[0].(map[string]any)
		}
	}
	for _, kv := range want {
		k, val, _ := strings.Cut(kv, "=")
		var at any = v
		for _, name := range strings.Split(k, ".") {
			obj, _ := at.(map[string]any)
			at = obj[name]
		}
		if got := fmt.Sprint(at); got != val {
			t.Errorf("%s = %s, want %s in %s", k, got, val, raw)
		}
	}
}

// m makes an argument map from pairs.
func m(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}
