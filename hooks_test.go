package collab_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func TestHooksUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	hookJSON := `{"id": 1, "url": "http://example.com/hook", "project_id": 3, "push_events": "true", "issues_events": "false",
	  "merge_requests_events": true, "tag_push_events": false, "note_events": "true", "build_events": "false",
	  "enable_ssl_verification": "true", "created_at": "2012-10-12T17:04:47Z"}`
	want := &collab.ProjectHook{ID: 1, URL: "http://example.com/hook", ProjectID: 3, PushEvents: true, IssuesEvents: false,
		MergeRequestsEvents: true, TagPushEvents: false, NoteEvents: true, BuildEvents: false, EnableSSLVerification: true,
		CreatedAt: ts("2012-10-12T17:04:47Z")}

	m.Reply(200, "["+hookJSON+"]")
	list, _, err := c.Hooks.List(ctx, "g/p", nil)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/hooks", nil)
	assert.Equal(t, []*collab.ProjectHook{want}, list)
	m.Reply(200, "["+hookJSON+"]")
	list, _, err = c.Hooks.List(ctx, "g/my.site", &collab.ListOptions{Page: 2, PerPage: 5})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fmy%2Esite/hooks", url.Values{"page": {"2"}, "per_page": {"5"}})
	assert.Equal(t, []*collab.ProjectHook{want}, list)
	m.Reply(200, hookJSON)
	got, _, err := c.Hooks.Get(ctx, 3, 1)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/3/hooks/1", nil)
	assert.Equal(t, want, got)

	opt := &collab.AddHookOptions{URL: "http://example.com/hook", PushEvents: collab.Ptr(true), IssuesEvents: collab.Ptr(false), MergeRequestsEvents: collab.Ptr(true),
		TagPushEvents: collab.Ptr(false), NoteEvents: collab.Ptr(true), BuildEvents: collab.Ptr(false), EnableSSLVerification: collab.Ptr(true)}
	form := url.Values{"url": {"http://example.com/hook"}, "push_events": {"true"}, "issues_events": {"false"}, "merge_requests_events": {"true"},
		"tag_push_events": {"false"}, "note_events": {"true"}, "build_events": {"false"}, "enable_ssl_verification": {"true"}}
	m.Reply(201, hookJSON)
	_, _, err = c.Hooks.Add(ctx, 3, opt)
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/3/hooks", form)
	m.Reply(200, hookJSON)
	_, _, err = c.Hooks.Update(ctx, 3, 1, opt)
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/3/hooks/1", form)
	m.Reply(200, hookJSON)
	_, err = c.Hooks.Delete(ctx, 3, 1)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/3/hooks/1", nil)

	m.Reply(422, `{"error": "Invalid url given"}`)
	_, _, err = c.Hooks.Add(ctx, 3, &collab.AddHookOptions{URL: "nope"})
	assert.ErrorIs(t, err, collab.ErrUnprocessable)
	assert.ErrorContains(t, err, "Invalid url given")
	m.Reply(404, `{"message":"404 Not found"}`)
	_, err = c.Hooks.Delete(ctx, 3, 9)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	before := m.Count()
	_, _, err = c.Hooks.Add(ctx, 3, &collab.AddHookOptions{})
	assert.Error(t, err)
	_, _, err = c.Hooks.Update(ctx, 3, 1, nil)
	assert.Error(t, err)
	assert.Equal(t, before, m.Count())
}

// TestHooksAllUnit follows the pages of the hook list and stops at the last.
func TestHooksAllUnit(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[{"id": 1, "url": "http://a.example/h"}]`, "X-Page", "1", "X-Total-Pages", "2", "X-Next-Page", "2")
	m.Reply(200, `[{"id": 2, "url": "http://b.example/h"}]`, "X-Page", "2", "X-Total-Pages", "2", "X-Next-Page", "")
	var ids []int
	for h, err := range c.Hooks.All(context.Background(), "g/p", nil) {
		require.NoError(t, err)
		ids = append(ids, h.ID)
	}
	assert.Equal(t, []int{1, 2}, ids)
	calls := m.Calls()
	require.Len(t, calls, 2)
	for i, call := range calls {
		assert.Equal(t, "GET", call.Method)
		assert.Equal(t, "/api/v3/projects/g%2Fp/hooks", call.Path)
		assert.Equal(t, url.Values{"page": {sprintf("%d", i+1)}, "per_page": {"100"}}, call.Query)
	}

	m.Reply(403, `{"message":"403 Forbidden"}`)
	var errs []error
	for h, err := range c.Hooks.All(context.Background(), 3, nil) {
		assert.Nil(t, h)
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], collab.ErrForbidden)
}

func TestHooksAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	dev := srv.AddUser("dev", false)
	project := srv.Seed.Project(srv.Admin, "Hooked", collab.InternalVisibility)
	pid := project.ID
	srv.Seed.Member(project, dev, collab.DeveloperAccess)

	h, _, err := c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: "https://ci.example.com/hook", IssuesEvents: collab.Ptr(true), EnableSSLVerification: collab.Ptr(false)})
	require.NoError(t, err)
	assert.True(t, bool(h.PushEvents), "push events are on by default")
	assert.True(t, bool(h.IssuesEvents))
	assert.False(t, bool(h.EnableSSLVerification))
	_, _, err = c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: "not a url"})
	assert.ErrorIs(t, err, collab.ErrUnprocessable)
	_, _, err = clientAs(t, srv, dev.Token).Hooks.List(ctx, pid, nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)

	upd, _, err := c.Hooks.Update(ctx, pid, h.ID, &collab.AddHookOptions{URL: "https://ci.example.com/v2", PushEvents: collab.Ptr(false), NoteEvents: collab.Ptr(true)})
	require.NoError(t, err)
	assert.Equal(t, "https://ci.example.com/v2", upd.URL)
	assert.False(t, bool(upd.PushEvents))
	assert.True(t, bool(upd.NoteEvents))
	got, _, err := c.Hooks.Get(ctx, pid, h.ID)
	require.NoError(t, err)
	assert.Equal(t, upd, got)
	list, _, err := c.Hooks.List(ctx, pid, nil)
	require.NoError(t, err)
	assert.Len(t, list, 1)

	// A second and third hook, read one a page and then all through All.
	for _, u := range []string{"https://ci.example.com/v3", "https://ci.example.com/v4"} {
		_, _, err = c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: u})
		require.NoError(t, err)
	}
	page2, resp, err := c.Hooks.List(ctx, pid, &collab.ListOptions{Page: 2, PerPage: 1})
	require.NoError(t, err)
	require.Len(t, page2, 1)
	assert.Equal(t, "https://ci.example.com/v3", page2[0].URL)
	assert.Equal(t, 3, resp.TotalPages)
	assert.Equal(t, 3, resp.NextPage)
	var urls []string
	for h, err := range c.Hooks.All(ctx, pid, &collab.ListOptions{PerPage: 1}) {
		require.NoError(t, err)
		urls = append(urls, h.URL)
	}
	assert.Equal(t, []string{"https://ci.example.com/v2", "https://ci.example.com/v3", "https://ci.example.com/v4"}, urls)
	_, err = c.Hooks.Delete(ctx, pid, h.ID)
	require.NoError(t, err)
	_, err = c.Hooks.Delete(ctx, pid, h.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = c.Hooks.Get(ctx, pid, h.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
