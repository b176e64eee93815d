package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testRegistrationToken = "reg-5be1d0c09a"

func TestRegisterRunner(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusCreated, `{"id": 77, "token": "`+testRunnerToken+`"}`, "Content-Type", "application/json")
	no := false
	reg, err := c.RegisterRunner(context.Background(), testRegistrationToken, &RegisterRunnerOptions{
		Description: "ci-runner-3", Tags: []string{"docker", "linux"}, RunUntagged: &no, Locked: &no,
		Info: &Info{Name: "runner-agent", Version: "1.4.2", Revision: "0fd4c2e", Platform: "linux", Architecture: "amd64"},
	})
	require.NoError(t, err)
	assert.Equal(t, &Registration{ID: 77, Token: collab.Secret(testRunnerToken)}, reg)
	rec := m.assertCall(http.MethodPost, "runners/register", url.Values{
		"token": {testRegistrationToken}, "description": {"ci-runner-3"}, "tag_list": {"docker,linux"},
		"run_untagged": {"false"}, "locked": {"false"},
		"info[name]": {"runner-agent"}, "info[version]": {"1.4.2"}, "info[revision]": {"0fd4c2e"},
		"info[platform]": {"linux"}, "info[architecture]": {"amd64"},
	})
	assert.Empty(t, rec.Query, "the registration token never goes in the URL")
	assert.Equal(t, "application/x-www-form-urlencoded", rec.Header.Get("Content-Type"))
	assert.NotContains(t, fmt.Sprint(reg), testRunnerToken)

	// Without options only the token is sent.
	_, err = c.RegisterRunner(context.Background(), testRegistrationToken, nil)
	require.NoError(t, err)
	m.assertCall(http.MethodPost, "runners/register", url.Values{"token": {testRegistrationToken}})
}

func TestRegisterRunnerErrors(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	_, err := c.RegisterRunner(ctx, "", nil)
	var ae *collab.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "registrationToken", ae.Arg)
	for _, tags := range [][]string{{"a,b"}, {" "}} {
		_, err = c.RegisterRunner(ctx, testRegistrationToken, &RegisterRunnerOptions{Tags: tags})
		require.ErrorAs(t, err, &ae, "%q", tags)
		assert.Equal(t, "opts.Tags", ae.Arg)
	}
	assert.Zero(t, m.Count(), "bad arguments send nothing")

	for _, tc := range []struct {
		status int
		body   string
		want   error
	}{
		{http.StatusForbidden, `{"message":"403 Forbidden"}`, collab.ErrForbidden},
		{http.StatusNotFound, `{"message":"404 Not found"}`, collab.ErrNotFound},
		{http.StatusBadRequest, `{"message":"400 (Bad request) \"token\" not given"}`, collab.ErrBadRequest},
	} {
		m.Reply(tc.status, tc.body, "Content-Type", "application/json")
		_, err := c.RegisterRunner(ctx, testRegistrationToken, nil)
		assert.ErrorIs(t, err, tc.want, "%d", tc.status)
	}
	for _, body := range []string{`{"id": 3}`, `null`, `{"id": 3, "token": ""}`} {
		m.Reply(http.StatusCreated, body, "Content-Type", "application/json")
		_, err := c.RegisterRunner(ctx, testRegistrationToken, nil)
		var de *collab.DecodeError
		assert.ErrorAs(t, err, &de, body)
	}
}

func TestDeleteRunner(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusOK, `{"id": 77}`, "Content-Type", "application/json")
	require.NoError(t, c.DeleteRunner(context.Background(), testRunnerToken))
	rec := m.assertCall(http.MethodDelete, "runners/delete", nil)
	assert.Equal(t, url.Values{"token": {testRunnerToken}}, rec.Form, "the token travels in the body")
	assert.Equal(t, "application/x-www-form-urlencoded", rec.Header.Get("Content-Type"))

	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden"}`, "Content-Type", "application/json")
	assert.ErrorIs(t, c.DeleteRunner(context.Background(), testRunnerToken), collab.ErrForbidden)

	// The body is rewound for a retry, as for any DELETE.
	c, m = newMockClient(t, collab.WithRetry(collab.RetryPolicy{MaxRetries: 1, MinWait: time.Millisecond, MaxWait: time.Millisecond}))
	m.Reply(http.StatusServiceUnavailable, `{"message":"busy"}`).Reply(http.StatusOK, `{}`, "Content-Type", "application/json")
	require.NoError(t, c.DeleteRunner(context.Background(), testRunnerToken))
	calls := m.Calls()
	require.Len(t, calls, 2)
	assert.Equal(t, url.Values{"token": {testRunnerToken}}, calls[1].Form)
	var ae *collab.ArgumentError
	require.ErrorAs(t, c.DeleteRunner(context.Background(), ""), &ae)
	assert.Equal(t, "runnerToken", ae.Arg)
}

func TestVerifyRunner(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	for _, tc := range []struct {
		status int
		want   error // nil: alive
	}{
		{http.StatusNotFound, nil},
		{http.StatusForbidden, collab.ErrForbidden},
		{http.StatusInternalServerError, collab.ErrServer},
	} {
		m.Reply(tc.status, `{"message":"x"}`, "Content-Type", "application/json")
		err := c.VerifyRunner(ctx, testRunnerToken)
		if tc.want == nil {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, tc.want, "%d", tc.status)
		}
		rec := m.assertCall(http.MethodPut, "builds/-1", url.Values{"token": {testRunnerToken}})
		assert.Empty(t, rec.Query)
	}
	var ae *collab.ArgumentError
	require.ErrorAs(t, c.VerifyRunner(ctx, ""), &ae)
}

// TestRunnerRegistrationAgainstFake registers, verifies, pauses, takes a
// build by tag, and unregisters against collabtest.
func TestRunnerRegistrationAgainstFake(t *testing.T) {
	c, srv := newFake(t)
	ctx := context.Background()
	project := srv.Seed.Project(srv.Admin, "Widget Factory", collab.PrivateVisibility)
	pid := project.ID
	untagged := srv.Seed.Build(project, collabtest.BuildSpec{Name: "any"}).ID
	tagged := srv.Seed.Build(project, collabtest.BuildSpec{Name: "docker", Tags: []string{"docker"}}).ID

	_, err := c.RegisterRunner(ctx, "not-a-registration-token", nil)
	require.ErrorIs(t, err, collab.ErrForbidden)
	no := false
	_, err = c.RegisterRunner(ctx, srv.RunnersRegistrationToken(), &RegisterRunnerOptions{RunUntagged: &no})
	require.ErrorIs(t, err, collab.ErrNotFound, "no tags and no untagged builds cannot be saved")
	require.Empty(t, srv.Runners())

	reg, err := c.RegisterRunner(ctx, srv.ProjectRunnersToken(pid), &RegisterRunnerOptions{
		Description: "docker runner", Tags: []string{"docker", "linux"}, RunUntagged: &no,
		Info: &Info{Name: "agent", Version: "2.0", Platform: "linux", Architecture: "arm64"},
	})
	require.NoError(t, err)
	runners := srv.Runners()
	require.Len(t, runners, 1)
	r := runners[0]
	assert.Equal(t, collabtest.Runner{ID: reg.ID, Description: "docker runner", Active: true, ProjectID: pid,
		Tags: []string{"docker", "linux"}, Name: "agent", Version: "2.0", Platform: "linux", Architecture: "arm64"}, r)

	require.NoError(t, c.VerifyRunner(ctx, string(reg.Token)))
	assert.False(t, srv.Runners()[0].ContactedAt.IsZero(), "the check reached the server")

	srv.SetRunnerActive(reg.ID, false)
	b, err := c.RequestBuild(ctx, string(reg.Token), nil)
	require.NoError(t, err, "a paused runner has nothing to do but is healthy")
	assert.Nil(t, b)
	require.NoError(t, c.VerifyRunner(ctx, string(reg.Token)), "a paused runner is alive")
	srv.SetRunnerActive(reg.ID, true)

	b, err = c.RequestBuild(ctx, string(reg.Token), nil)
	require.NoError(t, err)
	require.NotNil(t, b)
	assert.Equal(t, tagged, b.ID, "the runner skips the untagged build")
	status, _ := srv.BuildStatus(untagged)
	assert.Equal(t, "pending", status)

	require.NoError(t, c.DeleteRunner(ctx, string(reg.Token)))
	assert.Empty(t, srv.Runners())
	assert.ErrorIs(t, c.VerifyRunner(ctx, string(reg.Token)), collab.ErrForbidden)
	assert.ErrorIs(t, c.DeleteRunner(ctx, string(reg.Token)), collab.ErrForbidden)
}
