package collab_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

const settingsJSON = `{"id": 1, "default_projects_limit": 100000, "signup_enabled": true, "signin_enabled": true,
  "gravatar_enabled": true, "avatar_provider_enabled": false, "sign_in_text": "Welcome", "after_sign_up_text": "Thanks",
  "created_at": "2016-01-04T15:44:55.176Z", "updated_at": "2016-01-04T15:44:55.176Z", "home_page_url": "https://home.example",
  "default_branch_protection": 2, "restricted_visibility_levels": [0, 20], "max_attachment_size": 10,
  "session_expire_delay": 10080, "default_project_visibility": 10, "default_snippet_visibility": 0,
  "default_group_visibility": 20, "restricted_signup_domains": ["example.com"], "user_oauth_applications": true,
  "after_sign_out_path": "/bye", "container_registry_token_expire_delay": 5, "max_artifacts_size": 100,
  "shared_runners_enabled": true, "repository_storage": "default", "akismet_enabled": false, "metrics_port": 8089}`

func TestSettingsUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	want := &collab.ApplicationSettings{ID: 1, CreatedAt: ts("2016-01-04T15:44:55.176Z"), UpdatedAt: ts("2016-01-04T15:44:55.176Z"),
		DefaultProjectsLimit: 100000, SignupEnabled: true, SigninEnabled: true, GravatarEnabled: true, AvatarProviderEnabled: false,
		SignInText: collab.Ptr("Welcome"), AfterSignUpText: collab.Ptr("Thanks"), HomePageURL: collab.Ptr("https://home.example"), DefaultBranchProtection: 2,
		RestrictedVisibilityLevels: []int{0, 20}, MaxAttachmentSize: 10, SessionExpireDelay: 10080, DefaultProjectVisibility: 10,
		DefaultSnippetVisibility: 0, DefaultGroupVisibility: 20, RestrictedSignupDomains: []string{"example.com"},
		UserOAuthApplications: true, AfterSignOutPath: collab.Ptr("/bye"), ContainerRegistryTokenExpireDelay: 5, MaxArtifactsSize: 100,
		SharedRunnersEnabled: true, RepositoryStorage: "default",
		Extra: map[string]json.RawMessage{"akismet_enabled": json.RawMessage(`false`), "metrics_port": json.RawMessage(`8089`)}}

	m.Reply(200, settingsJSON)
	got, _, err := c.Settings.Get(ctx)
	require.NoError(t, err)
	m.AssertRequest("GET", "application/settings", nil)
	decoded := *got
	assert.Equal(t, want, &decoded)

	// The record never loses a field: unknown ones come back on encoding.
	out, err := json.Marshal(got)
	require.NoError(t, err)
	assert.JSONEq(t, settingsJSON, string(out))

	m.Reply(200, settingsJSON)
	_, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{
		DefaultProjectsLimit: collab.Ptr(5), SignupEnabled: collab.Ptr(false), SigninEnabled: collab.Ptr(true), GravatarEnabled: collab.Ptr(false),
		AvatarProviderEnabled: collab.Ptr(true), SignInText: collab.Ptr("hi"), AfterSignUpText: collab.Ptr("yo"), HomePageURL: collab.Ptr("https://h"),
		DefaultBranchProtection: collab.Ptr(0), RestrictedVisibilityLevels: &[]int{10, 20}, MaxAttachmentSize: collab.Ptr(3),
		SessionExpireDelay: collab.Ptr(60), DefaultProjectVisibility: collab.Ptr(20), DefaultSnippetVisibility: collab.Ptr(10), DefaultGroupVisibility: collab.Ptr(0),
		RestrictedSignupDomains: &[]string{"a.example", "b.example"}, UserOAuthApplications: collab.Ptr(false), AfterSignOutPath: collab.Ptr("/out"),
		ContainerRegistryTokenExpireDelay: collab.Ptr(9), MaxArtifactsSize: collab.Ptr(50), SharedRunnersEnabled: collab.Ptr(false), RepositoryStorage: collab.Ptr("ssd"),
		Extra: map[string]string{"metrics_port": "9000", "signup_enabled": "ignored: the named field wins"},
	})
	require.NoError(t, err)
	m.AssertRequest("PUT", "application/settings", url.Values{
		"default_projects_limit": {"5"}, "signup_enabled": {"false"}, "signin_enabled": {"true"}, "gravatar_enabled": {"false"},
		"avatar_provider_enabled": {"true"}, "sign_in_text": {"hi"}, "after_sign_up_text": {"yo"}, "home_page_url": {"https://h"},
		"default_branch_protection": {"0"}, "restricted_visibility_levels[]": {"10", "20"}, "max_attachment_size": {"3"},
		"session_expire_delay": {"60"}, "default_project_visibility": {"20"}, "default_snippet_visibility": {"10"},
		"default_group_visibility": {"0"}, "restricted_signup_domains[]": {"a.example", "b.example"}, "user_oauth_applications": {"false"},
		"after_sign_out_path": {"/out"}, "container_registry_token_expire_delay": {"9"}, "max_artifacts_size": {"50"},
		"shared_runners_enabled": {"false"}, "repository_storage": {"ssd"}, "metrics_port": {"9000"},
	})

	m.Reply(200, settingsJSON)
	_, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{RestrictedVisibilityLevels: &[]int{}, RestrictedSignupDomains: &[]string{}})
	require.NoError(t, err)
	m.AssertRequest("PUT", "application/settings", url.Values{"restricted_visibility_levels": {""}, "restricted_signup_domains": {""}})

	m.Reply(403, `{"message":"403 Forbidden"}`)
	_, _, err = c.Settings.Get(ctx)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	m.Reply(400, `{"message":{"default_projects_limit":["is invalid"]}}`)
	_, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{Extra: map[string]string{"default_projects_limit": "x"}})
	assert.ErrorIs(t, err, collab.ErrBadRequest)

	var bad collab.ApplicationSettings
	assert.Error(t, json.Unmarshal([]byte(`{"id": "x"}`), &bad))
	assert.Error(t, json.Unmarshal([]byte(`[1]`), &bad))
}

func TestSettingsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	s, _, err := c.Settings.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, 10, s.DefaultProjectsLimit, "contract defaults")
	assert.True(t, s.SignupEnabled)
	assert.Equal(t, 1, s.DefaultBranchProtection)
	assert.Nil(t, s.RestrictedVisibilityLevels)

	s, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{DefaultProjectsLimit: collab.Ptr(3), RestrictedVisibilityLevels: &[]int{20},
		RestrictedSignupDomains: &[]string{"example.com"}, Extra: map[string]string{"akismet_api_key": "k"}})
	require.NoError(t, err)
	assert.Equal(t, 3, s.DefaultProjectsLimit)
	assert.Equal(t, []int{20}, s.RestrictedVisibilityLevels)
	assert.Equal(t, []string{"example.com"}, s.RestrictedSignupDomains)
	assert.JSONEq(t, `"k"`, string(s.Extra["akismet_api_key"]), "unknown fields survive a PUT")
	again, _, err := c.Settings.Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, s, again)

	_, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{Extra: map[string]string{"default_projects_limit": "many", "signup_enabled": "perhaps"}})
	var er *collab.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, map[string][]string{"default_projects_limit": {"is invalid"}, "signup_enabled": {"is invalid"}}, er.Fields)
	alice := srv.AddUser("alice", false)
	_, _, err = clientAs(t, srv, alice.Token).Settings.Get(ctx)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, _, err = clientAs(t, srv, alice.Token).Settings.Update(ctx, &collab.UpdateSettingsOptions{SignupEnabled: collab.Ptr(false)})
	assert.ErrorIs(t, err, collab.ErrForbidden)
}
