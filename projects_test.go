package collab_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func ts(s string) *collab.Time {
	t, err := collab.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

func wantProject() *collab.Project {
	return &collab.Project{
		ID: 3, Name: "Diaspora Project Site", Path: "diaspora-project-site",
		NameWithNamespace: "Diaspora / Diaspora Project Site", PathWithNamespace: "diaspora/diaspora-project-site",
		Description: collab.Ptr("Community site"), DefaultBranch: "master", Public: false, VisibilityLevel: collab.InternalVisibility,
		SSHURLToRepo:  "git@example.com:diaspora/diaspora-project-site.git",
		HTTPURLToRepo: "http://example.com/diaspora/diaspora-project-site.git",
		WebURL:        "http://example.com/diaspora/diaspora-project-site", TagList: []string{"example", "disapora project"},
		Owner:         &collab.User{ID: 3, Name: "Diaspora", CreatedAt: ts("2013-09-30T13:46:02Z")},
		IssuesEnabled: true, MergeRequestsEnabled: true, BuildsEnabled: true, WikiEnabled: true, SnippetsEnabled: false,
		ContainerRegistryEnabled: true, PublicBuilds: true, SharedRunnersEnabled: true, Archived: false,
		OpenIssuesCount: 1, ForksCount: 2, StarCount: 5, CreatorID: 3,
		CreatedAt: ts("2013-09-30T13:46:02Z"), LastActivityAt: ts("2013-09-30T13:46:02.123Z"),
		Namespace: &collab.ProjectNamespace{ID: 3, Name: "Diaspora", Path: "diaspora", Description: collab.Ptr("The group"), OwnerID: collab.Ptr(1),
			CreatedAt: ts("2013-09-30T13:46:02Z"), UpdatedAt: ts("2013-09-30T13:46:02Z"),
			Avatar: &collab.NamespaceAvatar{URL: collab.Ptr("/uploads/group/avatar/3/a.png")}, ShareWithGroupLock: true, VisibilityLevel: collab.PublicVisibility},
		Permissions: &collab.Permissions{ProjectAccess: &collab.AccessInfo{AccessLevel: collab.GuestAccess, NotificationLevel: 3},
			GroupAccess: &collab.AccessInfo{AccessLevel: collab.OwnerAccess, NotificationLevel: 3}},
		AvatarURL:    collab.Ptr("http://example.com/uploads/project/avatar/3/uploads/avatar.png"),
		RunnersToken: "b8547b1dc37721d05889db52fa2f02",
		ForkedFromProject: &collab.ForkedFromProject{ID: 13083, Name: "Diaspora Client", NameWithNamespace: "Diaspora / Diaspora Client",
			Path: "diaspora-client", PathWithNamespace: "diaspora/diaspora-client"},
		SharedWithGroups: []*collab.SharedGroup{{GroupID: 4, GroupName: "Twitter", GroupAccessLevel: collab.DeveloperAccess}},
	}
}

func TestProjectsUnit(t *testing.T) {
	ctx := context.Background()
	listOpt := &collab.ListProjectsOptions{ListOptions: collab.ListOptions{Page: 2, PerPage: 5}, Archived: collab.Ptr(true), Visibility: collab.Ptr("internal"),
		OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc), Search: collab.Ptr("dia")}
	listWant := url.Values{"page": {"2"}, "per_page": {"5"}, "archived": {"true"}, "visibility": {"internal"}, "order_by": {"name"}, "sort": {"asc"}, "search": {"dia"}}
	createOpt := &collab.CreateProjectOptions{Name: "site", Path: collab.Ptr("my.site"), NamespaceID: collab.Ptr(4), Description: collab.Ptr("d"),
		IssuesEnabled: collab.Ptr(true), MergeRequestsEnabled: collab.Ptr(false), BuildsEnabled: collab.Ptr(true), WikiEnabled: collab.Ptr(false),
		SnippetsEnabled: collab.Ptr(true), ContainerRegistryEnabled: collab.Ptr(false), Public: collab.Ptr(false), VisibilityLevel: collab.Ptr(collab.PublicVisibility),
		ImportURL: collab.Ptr("https://git.example/x.git"), PublicBuilds: collab.Ptr(true)}
	createWant := url.Values{"name": {"site"}, "path": {"my.site"}, "namespace_id": {"4"}, "description": {"d"}, "issues_enabled": {"true"},
		"merge_requests_enabled": {"false"}, "builds_enabled": {"true"}, "wiki_enabled": {"false"}, "snippets_enabled": {"true"},
		"container_registry_enabled": {"false"}, "public": {"false"}, "visibility_level": {"20"}, "import_url": {"https://git.example/x.git"}, "public_builds": {"true"}}
	updateOpt := &collab.UpdateProjectOptions{Name: collab.Ptr("n"), Path: collab.Ptr("p"), Description: collab.Ptr("d"), DefaultBranch: collab.Ptr("main"),
		IssuesEnabled: collab.Ptr(true), MergeRequestsEnabled: collab.Ptr(true), BuildsEnabled: collab.Ptr(true), WikiEnabled: collab.Ptr(true), SnippetsEnabled: collab.Ptr(true),
		ContainerRegistryEnabled: collab.Ptr(true), Public: collab.Ptr(true), VisibilityLevel: collab.Ptr(collab.PrivateVisibility), PublicBuilds: collab.Ptr(false)}
	updateWant := url.Values{"name": {"n"}, "path": {"p"}, "description": {"d"}, "default_branch": {"main"}, "issues_enabled": {"true"},
		"merge_requests_enabled": {"true"}, "builds_enabled": {"true"}, "wiki_enabled": {"true"}, "snippets_enabled": {"true"},
		"container_registry_enabled": {"true"}, "public": {"true"}, "visibility_level": {"0"}, "public_builds": {"false"}}
	pid := "diaspora/my.site"
	esc := "diaspora%2Fmy%2Esite"

	one := func(p *collab.Project, _ *collab.Response, err error) (any, error) { return p, err }
	many := func(p []*collab.Project, _ *collab.Response, err error) (any, error) { return p, err }
	calls := []callCase{
		{"List", func(c *collab.Client) (any, error) { return many(c.Projects.List(ctx, listOpt)) }, "GET", "projects", listWant, true},
		{"ListOwned", func(c *collab.Client) (any, error) { return many(c.Projects.ListOwned(ctx, listOpt)) }, "GET", "projects/owned", listWant, true},
		{"ListStarred", func(c *collab.Client) (any, error) { return many(c.Projects.ListStarred(ctx, listOpt)) }, "GET", "projects/starred", listWant, true},
		{"ListEvery", func(c *collab.Client) (any, error) { return many(c.Projects.ListEvery(ctx, listOpt)) }, "GET", "projects/all", listWant, true},
		{"Search", func(c *collab.Client) (any, error) {
			return many(c.Projects.Search(ctx, "dia/x", &collab.SearchProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByID), Sort: collab.Ptr(collab.SortDesc)}))
		}, "GET", "projects/search/dia%2Fx", url.Values{"order_by": {"id"}, "sort": {"desc"}}, true},
		{"Get", func(c *collab.Client) (any, error) { return one(c.Projects.Get(ctx, pid)) }, "GET", "projects/" + esc, nil, false},
		{"Create", func(c *collab.Client) (any, error) { return one(c.Projects.Create(ctx, createOpt)) }, "POST", "projects", createWant, false},
		{"CreateForUser", func(c *collab.Client) (any, error) { return one(c.Projects.CreateForUser(ctx, 7, createOpt)) }, "POST", "projects/user/7", createWant, false},
		{"Update", func(c *collab.Client) (any, error) { return one(c.Projects.Update(ctx, pid, updateOpt)) }, "PUT", "projects/" + esc, updateWant, false},
		{"Fork", func(c *collab.Client) (any, error) { return one(c.Projects.Fork(ctx, pid)) }, "POST", "projects/fork/" + esc, nil, false},
		{"Star", func(c *collab.Client) (any, error) { return one(c.Projects.Star(ctx, pid)) }, "POST", "projects/" + esc + "/star", nil, false},
		{"Unstar", func(c *collab.Client) (any, error) { return one(c.Projects.Unstar(ctx, pid)) }, "DELETE", "projects/" + esc + "/star", nil, false},
		{"Archive", func(c *collab.Client) (any, error) { return one(c.Projects.Archive(ctx, pid)) }, "POST", "projects/" + esc + "/archive", nil, false},
		{"Unarchive", func(c *collab.Client) (any, error) { return one(c.Projects.Unarchive(ctx, pid)) }, "POST", "projects/" + esc + "/unarchive", nil, false},
	}
	runCallCases(t, "projects_project.json", wantProject(), calls)

	c, m := newMockClient(t)
	m.Reply(200, ``)
	_, err := c.Projects.Delete(ctx, pid)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/"+esc, nil)
	_, err = c.Projects.DeleteForkRelation(ctx, 12)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/12/fork", nil)

	m.Reply(201, `{"id": 1, "project_id": 3, "group_id": 4, "group_access": 30}`)
	share, _, err := c.Projects.Share(ctx, 3, &collab.ShareProjectOptions{GroupID: 4, GroupAccess: collab.DeveloperAccess})
	require.NoError(t, err)
	assert.Equal(t, &collab.ProjectShare{ID: 1, ProjectID: 3, GroupID: 4, GroupAccess: collab.DeveloperAccess}, share)
	m.AssertRequest("POST", "projects/3/share", url.Values{"group_id": {"4"}, "group_access": {"30"}})

	m.Reply(304, ``)
	_, _, err = c.Projects.Star(ctx, 3)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	m.Reply(403, `{"message":"403 Forbidden"}`)
	_, _, err = c.Projects.ListEvery(ctx, nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	m.Reply(409, `{"message":{"name":["has already been taken"]}}`)
	_, _, err = c.Projects.Fork(ctx, 3)
	assert.ErrorIs(t, err, collab.ErrConflict)
	m.Reply(409, `{"message":"Group access is not included in the list"}`)
	_, _, err = c.Projects.Share(ctx, 3, &collab.ShareProjectOptions{GroupID: 4, GroupAccess: 99})
	assert.ErrorIs(t, err, collab.ErrConflict)
	m.Reply(400, `{"message":{"visibility_level":["is not included in the list"]}}`)
	_, _, err = c.Projects.Update(ctx, 3, &collab.UpdateProjectOptions{VisibilityLevel: collab.Ptr(collab.VisibilityLevel(5))})
	var er *collab.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, map[string][]string{"visibility_level": {"is not included in the list"}}, er.Fields)

	before := m.Count()
	_, _, err = c.Projects.Create(ctx, &collab.CreateProjectOptions{})
	assert.Error(t, err)
	_, _, err = c.Projects.Create(ctx, nil)
	assert.Error(t, err)
	_, _, err = c.Projects.CreateForUser(ctx, 1, nil)
	assert.Error(t, err)
	_, _, err = c.Projects.Share(ctx, 3, nil)
	assert.Error(t, err)
	_, _, err = c.Projects.Get(ctx, 3.5)
	assert.Error(t, err)
	_, _, err = c.Projects.UploadFile(ctx, 3, nil, "x")
	assert.Error(t, err)
	_, _, err = c.Projects.UploadFile(ctx, []int{}, strings.NewReader("x"), "x")
	assert.Error(t, err)
	assert.Equal(t, before, m.Count(), "bad arguments send nothing")
}

func TestProjectEventsUnit(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(200, "projects_events.json")
	events, _, err := c.Projects.ListEvents(context.Background(), "g/p", &collab.ListOptions{Page: 1, PerPage: 2})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/events", url.Values{"page": {"1"}, "per_page": {"2"}})
	author := &collab.User{ID: 1, Name: "Dmitriy Zaporozhets", Username: "root", State: "active",
		AvatarURL: collab.Ptr("http://localhost:3000/uploads/user/avatar/1/fox_avatar.png"), WebURL: "http://localhost:3000/root"}
	require.Len(t, events, 3)
	assert.Equal(t, &collab.ProjectEvent{Title: nil, ProjectID: 1, ActionName: "opened", TargetID: collab.Ptr(160), TargetType: collab.Ptr("Issue"),
		TargetTitle: collab.Ptr("Qui natus eos odio tempore et quaerat consequuntur ducimus cupiditate quis."), AuthorID: 25,
		Author: author, AuthorUsername: "root", CreatedAt: ts("2016-06-17T15:28:13.543Z")}, events[0])
	assert.Equal(t, &collab.ProjectEvent{ProjectID: 15, ActionName: "pushed to", AuthorID: 1, Author: author, AuthorUsername: "root",
		Data: &collab.PushData{Before: "50d4420237a9de7be1304607147aec22e4a14af7", After: "c5feabde2d8cd023215af4d2ceeb7a64839fc428",
			Ref: "refs/heads/master", UserID: 1, UserName: "Dmitriy Zaporozhets",
			Repository: &collab.HookRepository{Name: "gitlabhq", URL: "git@dev.gitlab.org:gitlab/gitlabhq.git", Description: collab.Ptr("desc"), Homepage: "http://dev.gitlab.org/gitlab/gitlabhq"},
			Commits: []*collab.PushCommit{{ID: "c5feabde2d8cd023215af4d2ceeb7a64839fc428", Message: "Add simple search to projects in public area",
				Timestamp: ts("2013-05-13T18:18:08+00:00"), URL: "https://dev.gitlab.org/gitlab/gitlabhq/commit/c5feabde",
				Author: &collab.CommitAuthor{Name: "Dmitriy Zaporozhets", Email: "dmitriy.zaporozhets@gmail.com"}}},
			TotalCommitsCount: 1}}, events[1])
	assert.Equal(t, &collab.Note{ID: 1312, Body: "What an awesome day!", Attachment: nil, Author: author,
		CreatedAt: ts("2015-12-04T10:33:56.698Z"), System: false, Upvote: true, Downvote: false, NoteableID: 377, NoteableType: "Issue"}, events[2].Note)
	assert.Equal(t, "commented on", events[2].ActionName)
}

// TestProjectRunnerAndBranchParamsUnit checks that create, create-for-user
// and update send shared_runners_enabled, and create-for-user default_branch.
func TestProjectRunnerAndBranchParamsUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	body := `{"id": 9, "name": "site", "shared_runners_enabled": false, "default_branch": "develop"}`
	const form = "application/x-www-form-urlencoded"

	m.Reply(201, body)
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "site", SharedRunnersEnabled: collab.Ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, form, m.AssertRequest("POST", "projects", url.Values{"name": {"site"}, "shared_runners_enabled": {"false"}}).Header.Get("Content-Type"))
	assert.False(t, p.SharedRunnersEnabled)

	m.Reply(201, body)
	p, _, err = c.Projects.CreateForUser(ctx, 7, &collab.CreateProjectOptions{Name: "site", SharedRunnersEnabled: collab.Ptr(true), DefaultBranch: collab.Ptr("develop")})
	require.NoError(t, err)
	assert.Equal(t, form, m.AssertRequest("POST", "projects/user/7", url.Values{"name": {"site"}, "shared_runners_enabled": {"true"}, "default_branch": {"develop"}}).Header.Get("Content-Type"))
	assert.Equal(t, "develop", p.DefaultBranch)

	m.Reply(200, body)
	_, _, err = c.Projects.Update(ctx, "g/my.site", &collab.UpdateProjectOptions{SharedRunnersEnabled: collab.Ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, form, m.AssertRequest("PUT", "projects/g%2Fmy%2Esite", url.Values{"shared_runners_enabled": {"false"}}).Header.Get("Content-Type"))

	m.Reply(400, `{"message":{"default_branch":["does not exist"]}}`)
	_, _, err = c.Projects.CreateForUser(ctx, 7, &collab.CreateProjectOptions{Name: "site", DefaultBranch: collab.Ptr("nope")})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	assert.ErrorContains(t, err, "default_branch")
}

// TestProjectRunnerAndBranchParamsAgainstFake sends the parameters to the fake
// server. It does not read shared_runners_enabled, nor default_branch on
// creation, so this checks that the calls succeed and that the answer decodes.
func TestProjectRunnerAndBranchParamsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	bob := srv.AddUser("bob", false)

	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "Runners Off", SharedRunnersEnabled: collab.Ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, "Runners Off", p.Name)
	given, _, err := c.Projects.CreateForUser(ctx, bob.ID, &collab.CreateProjectOptions{Name: "Given", SharedRunnersEnabled: collab.Ptr(false),
		DefaultBranch: collab.Ptr("master")})
	require.NoError(t, err)
	assert.Equal(t, bob.ID, given.Owner.ID)
	upd, _, err := c.Projects.Update(ctx, p.ID, &collab.UpdateProjectOptions{SharedRunnersEnabled: collab.Ptr(true)})
	require.NoError(t, err)
	assert.True(t, upd.SharedRunnersEnabled)
}

func TestUploadFileUnit(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(201, `{"alt": "dk", "url": "/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png", "is_image": true, "markdown": "![dk](/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png)"}`)
	f, _, err := c.Projects.UploadFile(context.Background(), "g/p", strings.NewReader("PNG bytes"), "dk.png")
	require.NoError(t, err)
	assert.Equal(t, &collab.ProjectFile{Alt: "dk", URL: "/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png", IsImage: true,
		Markdown: "![dk](/uploads/66dbcd21ec5d24ed6ea225176098d52b/dk.png)"}, f)
	rec := m.Last()
	assert.Equal(t, "/api/v3/projects/g%2Fp/uploads", rec.Path)
	assert.Equal(t, testToken, rec.Header.Get("PRIVATE-TOKEN"))
	assert.True(t, strings.HasPrefix(rec.Header.Get("Content-Type"), "multipart/form-data; boundary="))
	assert.Contains(t, string(rec.Body), `Content-Disposition: form-data; name="file"; filename="dk.png"`)
	assert.Contains(t, string(rec.Body), "PNG bytes")

	m.Reply(201, `null`)
	_, _, err = c.Projects.UploadFile(context.Background(), 1, strings.NewReader("big"), "big.bin")
	assert.ErrorIs(t, err, collab.ErrUploadRejected, "a null body is an error, not a nil result")

	m.Fail(errors.New("connection reset"))
	_, _, err = c.Projects.UploadFile(context.Background(), 1, io.MultiReader(strings.NewReader("x")), "x")
	var re *collab.RequestError
	assert.ErrorAs(t, err, &re)
}

func TestProjectsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	alice := srv.AddUser("alice", false)
	bob := srv.AddUser("bob", false)
	ac := clientAs(t, srv, alice.Token)
	bc := clientAs(t, srv, bob.Token)

	p, _, err := ac.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "My Site", Path: collab.Ptr("my.site"), Description: collab.Ptr("docs"), WikiEnabled: collab.Ptr(false)})
	require.NoError(t, err)
	assert.Equal(t, "alice/my.site", p.PathWithNamespace)
	assert.Equal(t, collab.PrivateVisibility, p.VisibilityLevel)
	assert.False(t, p.WikiEnabled)
	assert.NotEmpty(t, p.RunnersToken, "the owner sees the runners token")
	assert.Equal(t, "alice", p.Namespace.Path)
	assert.Equal(t, alice.ID, p.Owner.ID)
	assert.Equal(t, collab.OwnerAccess, p.Permissions.ProjectAccess.AccessLevel)

	got, _, err := ac.Projects.Get(ctx, "alice/my.site")
	require.NoError(t, err, "a dotted path is escaped, so the server does not read .site as a format")
	assert.Equal(t, p.ID, got.ID)

	_, _, err = bc.Projects.Get(ctx, p.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "private projects are hidden from non-members")
	_, _, err = ac.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "My Site", Path: collab.Ptr("my.site")})
	assert.ErrorIs(t, err, collab.ErrBadRequest, "the path is taken")
	_, _, err = ac.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "x", VisibilityLevel: collab.Ptr(collab.VisibilityLevel(7))})
	assert.ErrorIs(t, err, collab.ErrBadRequest)

	pub, _, err := bc.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "Public Thing", Public: collab.Ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, collab.PublicVisibility, pub.VisibilityLevel)
	assert.Empty(t, func() string { p, _, _ := ac.Projects.Get(ctx, pub.ID); return string(p.RunnersToken) }(), "non-owners never see the runners token")

	list, resp, err := ac.Projects.List(ctx, nil)
	require.NoError(t, err)
	assert.ElementsMatch(t, []int{p.ID, pub.ID}, ids(list))
	assert.Equal(t, 2, resp.TotalItems)
	list, _, err = bc.Projects.List(ctx, &collab.ListProjectsOptions{Visibility: collab.Ptr("public")})
	require.NoError(t, err)
	assert.Equal(t, []int{pub.ID}, ids(list), "bob sees only what he can access")
	list, _, err = ac.Projects.ListOwned(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{p.ID}, ids(list))
	_, _, err = ac.Projects.ListEvery(ctx, nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	list, _, err = c.Projects.ListEvery(ctx, &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)})
	require.NoError(t, err)
	assert.Equal(t, []string{"My Site", "Public Thing"}, names(list))
	list, _, err = ac.Projects.Search(ctx, "thing", nil)
	require.NoError(t, err)
	assert.Equal(t, []int{pub.ID}, ids(list))
	_, _, err = c.Projects.List(ctx, &collab.ListProjectsOptions{OrderBy: collab.Ptr[collab.ProjectOrderBy]("nonsense")})
	assert.ErrorIs(t, err, collab.ErrBadRequest)

	// Star twice, unstar twice.
	starred, _, err := ac.Projects.Star(ctx, pub.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, starred.StarCount)
	_, _, err = ac.Projects.Star(ctx, pub.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	list, _, err = ac.Projects.ListStarred(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{pub.ID}, ids(list))
	unstarred, _, err := ac.Projects.Unstar(ctx, pub.ID)
	require.NoError(t, err)
	assert.Equal(t, 0, unstarred.StarCount)
	_, _, err = ac.Projects.Unstar(ctx, pub.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)

	// Archive is owner-only and idempotent.
	_, _, err = ac.Projects.Archive(ctx, pub.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	for i := 0; i < 2; i++ {
		a, _, err := bc.Projects.Archive(ctx, pub.ID)
		require.NoError(t, err)
		assert.True(t, a.Archived)
	}
	list, _, err = bc.Projects.List(ctx, &collab.ListProjectsOptions{Archived: collab.Ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, []int{pub.ID}, ids(list))
	for i := 0; i < 2; i++ {
		a, _, err := bc.Projects.Unarchive(ctx, pub.ID)
		require.NoError(t, err)
		assert.False(t, a.Archived)
	}

	// Update, fork, fork relations.
	upd, _, err := ac.Projects.Update(ctx, p.ID, &collab.UpdateProjectOptions{Description: collab.Ptr("new"), VisibilityLevel: collab.Ptr(collab.InternalVisibility)})
	require.NoError(t, err)
	assert.Equal(t, collab.Ptr("new"), upd.Description)
	assert.Equal(t, collab.InternalVisibility, upd.VisibilityLevel)
	_, _, err = bc.Projects.Update(ctx, p.ID, &collab.UpdateProjectOptions{Description: collab.Ptr("hijack")})
	assert.ErrorIs(t, err, collab.ErrForbidden)
	fork, _, err := bc.Projects.Fork(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "bob/my.site", fork.PathWithNamespace)
	assert.Equal(t, p.ID, fork.ForkedFromProject.ID)
	_, _, err = bc.Projects.Fork(ctx, p.ID)
	assert.ErrorIs(t, err, collab.ErrConflict)
	_, _, err = bc.Projects.Fork(ctx, 999999)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, err = bc.Projects.DeleteForkRelation(ctx, fork.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = c.Projects.DeleteForkRelation(ctx, fork.ID)
	require.NoError(t, err)
	rel, resp, err := c.Projects.CreateForkRelation(ctx, fork.ID, p.ID)
	require.NoError(t, err)
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, p.ID, rel.ForkedFromProjectID)
	assert.Equal(t, fork.ID, rel.ForkedToProjectID)
	assert.NotZero(t, rel.ID)
	assert.NotEqual(t, fork.ID, rel.ID, "the link's id is its own")
	assert.NotNil(t, rel.CreatedAt)
	assert.NotNil(t, rel.UpdatedAt)
	assert.Empty(t, rel.Extra)
	again, _, err := c.Projects.Get(ctx, fork.ID)
	require.NoError(t, err)
	assert.Equal(t, p.ID, again.ForkedFromProject.ID)
	_, _, err = c.Projects.CreateForkRelation(ctx, fork.ID, p.ID)
	assert.ErrorIs(t, err, collab.ErrConflict)
	_, _, err = bc.Projects.CreateForkRelation(ctx, fork.ID, p.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)

	// Admin creates for a user.
	forCarol, _, err := c.Projects.CreateForUser(ctx, bob.ID, &collab.CreateProjectOptions{Name: "Given"})
	require.NoError(t, err)
	assert.Equal(t, bob.ID, forCarol.Owner.ID)
	_, _, err = ac.Projects.CreateForUser(ctx, bob.ID, &collab.CreateProjectOptions{Name: "Nope"})
	assert.ErrorIs(t, err, collab.ErrForbidden)

	// Share with a group.
	g, _, err := ac.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Docs", Path: "docs"})
	require.NoError(t, err)
	share, _, err := ac.Projects.Share(ctx, p.ID, &collab.ShareProjectOptions{GroupID: g.ID, GroupAccess: collab.ReporterAccess})
	require.NoError(t, err)
	assert.Equal(t, g.ID, share.GroupID)
	shared, _, err := ac.Projects.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, []*collab.SharedGroup{{GroupID: g.ID, GroupName: "Docs", GroupAccessLevel: collab.ReporterAccess}}, shared.SharedWithGroups)
	_, _, err = ac.Projects.Share(ctx, p.ID, &collab.ShareProjectOptions{GroupID: g.ID, GroupAccess: 99})
	assert.ErrorIs(t, err, collab.ErrConflict)

	// Events are recorded, newest first.
	events, _, err := ac.Projects.ListEvents(ctx, p.ID, nil)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Equal(t, "updated", events[0].ActionName)
	assert.Equal(t, "created", events[len(events)-1].ActionName)

	// Delete.
	_, err = bc.Projects.Delete(ctx, p.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = ac.Projects.Delete(ctx, p.ID)
	require.NoError(t, err)
	_, _, err = ac.Projects.Get(ctx, p.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

func TestUploadFileAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.Seed.Project(srv.Admin, "Files", collab.PrivateVisibility).ID
	f, _, err := c.Projects.UploadFile(ctx, pid, strings.NewReader("hello"), "notes.txt")
	require.NoError(t, err)
	assert.False(t, f.IsImage)
	assert.True(t, strings.HasPrefix(f.URL, "/uploads/"))
	assert.Equal(t, "["+"notes.txt"+"]("+f.URL+")", f.Markdown)
	img, _, err := c.Projects.UploadFile(ctx, pid, strings.NewReader("GIF89a"), "dk.gif")
	require.NoError(t, err)
	assert.True(t, img.IsImage)
	assert.True(t, strings.HasPrefix(img.Markdown, "!["))

	srv.SetMaxAttachmentSize(10)
	_, _, err = c.Projects.UploadFile(ctx, pid, strings.NewReader(strings.Repeat("x", 11)), "big.bin")
	assert.ErrorIs(t, err, collab.ErrUploadRejected)
	var de *collab.DecodeError
	assert.ErrorAs(t, err, &de)
}

func TestProjectIteratorsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	for i := 0; i < 230; i++ {
		srv.Seed.Project(srv.Admin, "p"+strings.Repeat("x", i%7)+time.Duration(i).String(), collab.PublicVisibility)
	}
	seen := map[int]bool{}
	for p, err := range c.Projects.All(ctx, &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByID), Sort: collab.Ptr(collab.SortAsc)}, collab.Prefetch(3)) {
		require.NoError(t, err)
		assert.False(t, seen[p.ID], "no duplicates")
		seen[p.ID] = true
	}
	assert.Len(t, seen, 230)
	for _, seq := range []func(yield func(*collab.Project, error) bool){
		c.Projects.AllOwned(ctx, nil), c.Projects.AllEvery(ctx, nil), c.Projects.AllSearch(ctx, "p", nil),
	} {
		n := 0
		for _, err := range seq {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, 230, n)
	}
	for _, err := range c.Projects.AllStarred(ctx, nil) {
		require.NoError(t, err)
	}
	n := 0
	for _, err := range c.Projects.AllEvents(ctx, 2+1, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Positive(t, n)
	_ = collabtest.PrivateToken
}

func ids(ps []*collab.Project) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func names(ps []*collab.Project) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

var _ = http.MethodGet

func TestCreateForkRelationUnit(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(201, `{"id": 3, "forked_to_project_id": 12, "forked_from_project_id": "9",
	  "created_at": "2016-06-21T09:14:07.000Z", "updated_at": "2016-06-21 09:14:07 UTC"}`)
	rel, _, err := c.Projects.CreateForkRelation(context.Background(), "diaspora/my.site", 9)
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/diaspora%2Fmy%2Esite/fork/9", nil)
	assert.Equal(t, &collab.ForkRelation{ID: 3, ForkedToProjectID: 12, ForkedFromProjectID: 9,
		CreatedAt: ts("2016-06-21T09:14:07.000Z"), UpdatedAt: ts("2016-06-21T09:14:07Z")}, rel)
	m.Reply(409, `{"message": "409 Project already forked"}`)
	_, _, err = c.Projects.CreateForkRelation(context.Background(), 12, 9)
	assert.ErrorIs(t, err, collab.ErrConflict)
	m.Reply(404, `{"message": "404 Source Project Not Found"}`)
	_, _, err = c.Projects.CreateForkRelation(context.Background(), 12, 9)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	n := m.Count()
	_, _, err = c.Projects.CreateForkRelation(context.Background(), 12, 0)
	assert.Error(t, err)
	assert.Equal(t, n, m.Count())
}
