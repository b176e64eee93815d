package collab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

const fixtureToken = "pt-LEAKME-7f3c9a" // the private_token of testdata/users_current.json

var _ = watched.Secret(fixtureToken)

func wantAdminDetails() collab.UserDetails {
	return collab.UserDetails{
		User: collab.User{ID: 1, Name: "Administrator", Username: "root", State: collab.UserActive, WebURL: "https://collab.example.com/root",
			Email: "admin@example.com", CreatedAt: ts("2016-06-01T10:00:00.000Z")},
		UserProfile: collab.UserProfile{IsAdmin: true, Bio: collab.Ptr("Ops"), Location: collab.Ptr("Berlin"), Skype: "sk", LinkedIn: "li", Twitter: "tw",
			WebsiteURL: "https://example.com"},
		LastSignInAt: ts("2016-06-20T10:00:00.000Z"), ConfirmedAt: ts("2016-06-01T10:00:00.000Z"),
		CurrentSignInAt: ts("2016-06-21T10:00:00.000Z"), ThemeID: 2, ColorSchemeID: 3, ProjectsLimit: 10,
		Identities:     []*collab.Identity{{Provider: "ldapmain", ExternUID: "uid=root,ou=people"}},
		CanCreateGroup: true, CanCreateProject: true,
	}
}

func TestUsersUnit(t *testing.T) {
	ctx := context.Background()
	body, err := os.ReadFile("testdata/users_current.json")
	require.NoError(t, err)
	c, m := newMockClient(t)

	m.Reply(200, string(body))
	me, _, err := c.Users.Current(ctx)
	require.NoError(t, err)
	m.AssertRequest("GET", "user", nil)
	want := wantAdminDetails()
	want.PrivateToken = fixtureToken
	assert.Equal(t, &want, me)

	m.Reply(200, "["+string(body)+"]")
	list, _, err := c.Users.List(ctx, &collab.ListUsersOptions{ListOptions: collab.ListOptions{Page: 2}, Username: collab.Ptr("root"), Search: collab.Ptr("adm"), Active: true})
	require.NoError(t, err)
	m.AssertRequest("GET", "users", url.Values{"page": {"2"}, "username": {"root"}, "search": {"adm"}, "active": {"true"}})
	assert.Equal(t, []*collab.UserDetails{&want}, list)
	assert.Empty(t, list[0].Extra, "a private_token in any user record is a field, never kept in Extra")

	m.Reply(200, `[]`)
	_, _, err = c.Users.List(ctx, &collab.ListUsersOptions{Active: false})
	require.NoError(t, err)
	m.AssertRequest("GET", "users", nil) // any value of active filters, so false is not sent

	m.Reply(200, `[{"id": 7, "name": "Bob", "username": "bob", "state": "blocked", "avatar_url": null, "web_url": "u"}]`)
	for u, err := range c.Users.All(ctx, nil) {
		require.NoError(t, err)
		assert.Equal(t, &collab.UserDetails{User: collab.User{ID: 7, Name: "Bob", Username: "bob", State: collab.UserBlocked, WebURL: "u"}}, u)
	}
	m.AssertRequest("GET", "users", url.Values{"page": {"1"}, "per_page": {"100"}})

	m.Reply(200, string(body))
	got, _, err := c.Users.Get(ctx, 1)
	require.NoError(t, err)
	m.AssertRequest("GET", "users/1", nil)
	assert.Equal(t, 1, got.ID)

	m.Reply(404, `{"message": "User not found."}`)
	_, _, err = c.Users.Get(ctx, 99)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.Contains(t, err.Error(), "User not found.")
	m.Reply(403, `{"message": "Not authorized."}`)
	_, _, err = c.Users.List(ctx, nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	m.Reply(401, `{"message": "401 Unauthorized"}`)
	_, _, err = c.Users.Current(ctx)
	assert.ErrorIs(t, err, collab.ErrUnauthorized)
	m.Reply(200, `null`)
	_, _, err = c.Users.Current(ctx)
	assert.Error(t, err)

	before := m.Count()
	_, _, err = c.Users.Get(ctx, 0)
	var ae *collab.ArgumentError
	assert.ErrorAs(t, err, &ae)
	assert.Equal(t, before, m.Count(), "a bad id sends nothing")
}

// TestCurrentUserNeverPrintsToken: the private token of GET /user shows on
// no output path: fmt verbs, String, slog, Extra, and the text of a later
// error whose body repeats it. JSON keeps it, so that the record reads back
// whole.
func TestCurrentUserNeverPrintsToken(t *testing.T) {
	body, err := os.ReadFile("testdata/users_current.json")
	require.NoError(t, err)
	c, m := newMockClient(t)
	m.Reply(200, string(body))
	me, _, err := c.Users.Current(context.Background())
	require.NoError(t, err)

	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d"} {
		outs = append(outs, fmt.Sprintf(verb, me), fmt.Sprintf(verb, *me), fmt.Sprintf(verb, me.PrivateToken))
	}
	outs = append(outs, me.PrivateToken.String(), me.PrivateToken.GoString())
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("me", "user", me, "token", me.PrivateToken, "value", *me)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("me", "token", me.PrivateToken)
	outs = append(outs, logs.String())
	for _, extra := range []map[string]json.RawMessage{me.Extra, me.User.Extra} {
		for k, v := range extra {
			outs = append(outs, k, string(v))
		}
	}
	// A server that repeats the token in an error body.
	m.Reply(500, `{"message": "token `+fixtureToken+` rejected"}`)
	_, _, err = c.Projects.Get(context.Background(), 1)
	require.Error(t, err)
	outs = append(outs, err.Error(), fmt.Sprintf("%+v", err))
	for _, out := range outs {
		assert.NotContains(t, out, fixtureToken)
		assert.NotContains(t, out, strings.ToUpper(fmt.Sprintf("%x", fixtureToken)))
		assert.NotContains(t, out, fmt.Sprintf("%x", fixtureToken))
	}

	j, err := json.Marshal(me)
	require.NoError(t, err)
	assert.NotContains(t, string(j), fixtureToken)
	assert.Contains(t, string(j), `"private_token":"`+collab.Redacted+`"`, "JSON writes the marker in the token's place")
}

func TestUsersFake(t *testing.T) {
	ctx := context.Background()
	admin, srv := newFakeClient(t)
	bob := srv.AddUser("bob", false)
	carol := srv.AddUser("carol", false)
	srv.BlockUser(carol.ID)
	asBob := clientAs(t, srv, bob.Token)

	me, _, err := admin.Users.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, srv.AdminToken, string(me.PrivateToken))
	assert.True(t, me.IsAdmin)
	assert.NotEmpty(t, me.Email)
	assert.True(t, me.CanCreateProject)
	assert.Equal(t, collab.UserActive, me.State)

	// Another credential of bob's still answers his private token.
	oauth, err := collab.NewClient(srv.URL, collab.WithOAuthToken(watched.Secret(srv.Seed.Token(bob, collabtest.OAuthToken))), collab.WithoutRetries())
	require.NoError(t, err)
	bobMe, _, err := oauth.Users.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, bob.Token, string(bobMe.PrivateToken))
	assert.Equal(t, "bob", bobMe.Username)
	assert.False(t, bobMe.IsAdmin)
	sudoMe, _, err := admin.Sudo("bob").Users.Current(ctx)
	require.NoError(t, err)
	assert.Equal(t, bob.ID, sudoMe.ID)

	all, _, err := admin.Users.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, all, 3)
	assert.NotEmpty(t, all[1].Email, "administrators get full records")
	basic, _, err := asBob.Users.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, basic, 3)
	assert.Empty(t, basic[1].Email, "others get the basic record")
	assert.Equal(t, "bob", basic[1].Username)
	assert.Empty(t, basic[1].Extra)

	one, resp, err := asBob.Users.List(ctx, &collab.ListUsersOptions{Username: collab.Ptr("CAROL")})
	require.NoError(t, err)
	require.Len(t, one, 1)
	assert.Equal(t, collab.UserBlocked, one[0].State)
	assert.Zero(t, resp.TotalItems, "a username lookup is not paginated")
	active, _, err := asBob.Users.List(ctx, &collab.ListUsersOptions{Active: true, Search: collab.Ptr("O")})
	require.NoError(t, err)
	require.Len(t, active, 2, "carol is blocked")
	assert.Equal(t, "bob", active[1].Username)
	found, _, err := asBob.Users.List(ctx, &collab.ListUsersOptions{Search: collab.Ptr("carol@")})
	require.NoError(t, err)
	require.Len(t, found, 1, "search reads emails too")
	var n int
	for _, err := range admin.Users.All(ctx, &collab.ListUsersOptions{ListOptions: collab.ListOptions{PerPage: 1}}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 3, n)

	got, _, err := asBob.Users.Get(ctx, srv.AdminID)
	require.NoError(t, err)
	assert.True(t, got.IsAdmin)
	assert.NotNil(t, got.CreatedAt)
	assert.Empty(t, got.Email, "others see no email")
	full, _, err := admin.Users.Get(ctx, bob.ID)
	require.NoError(t, err)
	assert.Equal(t, "bob@example.com", full.Email)
	_, _, err = asBob.Users.Get(ctx, carol.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = admin.Users.Get(ctx, carol.ID)
	require.NoError(t, err)
	_, _, err = admin.Users.Get(ctx, 9999)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, resp, err = asBob.Users.Get(ctx, -1)
	assert.Error(t, err)
	assert.Nil(t, resp)
}
