package runner

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFake(t *testing.T) (*Client, *collabtest.Server) {
	t.Helper()
	srv := collabtest.NewTestServer(t) // closed, and checked for handler panics, when the test ends
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()), collab.WithoutRetries(), collab.WithLogger(testLogger))
	require.NoError(t, err)
	return c, srv
}

// TestRunnerLoop runs the whole loop a runner runs against the fake.
func TestRunnerLoop(t *testing.T) {
	c, srv := newFake(t)
	ctx := context.Background()
	project := srv.Seed.Project(srv.Admin, "Widget Factory", collab.PrivateVisibility)
	pid := project.ID
	older := srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Commands: "echo hello\nmake test"}).ID
	newer := srv.Seed.Build(project, collabtest.BuildSpec{Name: "lint"}).ID
	srv.SetBuildVariables(older, map[string]string{"DB_PASSWORD": "hunter2"}, false)
	rid, rtok := srv.AddRunner("shared runner")

	_, err := c.RequestBuild(ctx, "not-a-runner", nil)
	require.ErrorIs(t, err, collab.ErrForbidden)

	b, err := c.RequestBuild(ctx, rtok, &Info{Name: "loop-runner", Version: "1.0", Platform: "linux", Architecture: "amd64"})
	require.NoError(t, err)
	require.NotNil(t, b)
	assert.Equal(t, older, b.ID, "the oldest pending build first")
	assert.Equal(t, collab.BuildRunning, b.Status)
	assert.Equal(t, "rspec", b.Name)
	assert.Equal(t, "echo hello\nmake test", b.Commands)
	assert.Equal(t, pid, b.ProjectID)
	assert.Equal(t, "Widget Factory", b.ProjectName)
	assert.Equal(t, srv.ProjectRunnersToken(pid), string(b.Token))
	assert.Contains(t, string(b.RepoURL), "widget-factory.git")
	assert.NotContains(t, b.RepoURL.String(), string(b.Token))
	assert.Contains(t, b.Variables, Variable{Key: "DB_PASSWORD", Value: "hunter2", Public: false})
	status, runnerID := srv.BuildStatus(b.ID)
	assert.Equal(t, "running", status)
	assert.Equal(t, rid, runnerID)

	tw := c.NewTraceWriter(ctx, b.ID, string(b.Token), TraceWriterOptions{FlushSize: 16, tick: never})
	var log bytes.Buffer
	for i := range 50 {
		line := strings.Repeat("=", i) + " step\n"
		log.WriteString(line)
		_, err := io.WriteString(tw, line)
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	assert.Equal(t, log.String(), string(srv.BuildTrace(b.ID)))
	assert.Equal(t, collab.BuildRunning, tw.Status())

	// Appending at a stale offset gives the server's length to resume from.
	_, _, err = c.AppendTrace(ctx, b.ID, string(b.Token), 3, []byte("stale"))
	var re *RangeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, int64(log.Len()), re.Length)
	_, _, err = c.AppendTrace(ctx, b.ID, "bad-token", int64(log.Len()), []byte("x"))
	assert.ErrorIs(t, err, collab.ErrForbidden)

	zip := []byte("PK\x03\x04 pretend zip")
	ub, err := c.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", bytes.NewReader(zip), &UploadArtifactsOptions{ExpireIn: "7 days"})
	require.NoError(t, err)
	assert.Equal(t, b.ID, ub.ID)
	require.NotNil(t, ub.ArtifactsFile)
	assert.Equal(t, collab.ArtifactsFile{Filename: "artifacts.zip", Size: int64(len(zip))}, *ub.ArtifactsFile)
	assert.Equal(t, b.Name, ub.Name)
	assert.Equal(t, b.SHA, ub.SHA, "the answer is the runner's build record")
	assert.Equal(t, b.Commands, ub.Commands)
	assert.NotNil(t, ub.ArtifactsExpireAt)

	var got bytes.Buffer
	n, err := c.DownloadArtifacts(ctx, b.ID, string(b.Token), &got)
	require.NoError(t, err)
	assert.Equal(t, int64(len(zip)), n)
	assert.Equal(t, zip, got.Bytes())
	_, err = c.DownloadArtifacts(ctx, b.ID, "bad-token", &got)
	assert.ErrorIs(t, err, collab.ErrForbidden)

	// The consumer API sees what the runner did: status, trace, artifacts_file.
	api, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithoutRetries(), collab.WithLogger(testLogger))
	require.NoError(t, err)
	seen, _, err := api.Builds.Get(ctx, pid, b.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.BuildRunning, seen.Status)
	require.NotNil(t, seen.ArtifactsFile)
	assert.Equal(t, int64(len(zip)), seen.ArtifactsFile.Size)
	var trace bytes.Buffer
	_, err = api.Builds.Trace(ctx, pid, b.ID, &trace)
	require.NoError(t, err)
	assert.Equal(t, log.String(), trace.String())

	require.ErrorIs(t, c.UpdateBuild(ctx, b.ID, "not-a-runner", collab.BuildSuccess, nil), collab.ErrForbidden)
	require.NoError(t, c.UpdateBuild(ctx, b.ID, rtok, collab.BuildSuccess, nil))
	seen, _, err = api.Builds.Get(ctx, pid, b.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.BuildSuccess, seen.Status)
	assert.NotNil(t, seen.FinishedAt)
	status, _ = srv.BuildStatus(b.ID)
	assert.Equal(t, "success", status)
	assert.Equal(t, log.String(), string(srv.BuildTrace(b.ID)), "a state update without a trace keeps it")

	// The build is over: updates are 404, uploads 403; a late append is
	// kept and reports the state, so that a runner stops.
	assert.ErrorIs(t, c.UpdateBuild(ctx, b.ID, rtok, collab.BuildFailed, nil), collab.ErrNotFound)
	_, err = c.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", bytes.NewReader(zip), nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	state, _, err := c.AppendTrace(ctx, b.ID, string(b.Token), int64(log.Len()), []byte("late"))
	require.NoError(t, err)
	assert.Equal(t, collab.BuildSuccess, state)
	assert.Equal(t, log.String()+"late", string(srv.BuildTrace(b.ID)))

	require.NoError(t, c.DeleteArtifacts(ctx, b.ID, string(b.Token)))
	_, err = c.DownloadArtifacts(ctx, b.ID, string(b.Token), &got)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	next, err := c.RequestBuild(ctx, rtok, nil)
	require.NoError(t, err)
	require.NotNil(t, next)
	assert.Equal(t, newer, next.ID)
	none, err := c.RequestBuild(ctx, rtok, nil)
	assert.NoError(t, err)
	assert.Nil(t, none, "nothing pending")
}

func TestRunnerLoopCanceled(t *testing.T) {
	c, srv := newFake(t)
	ctx := context.Background()
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	srv.Seed.Build(project, collabtest.BuildSpec{Commands: "sleep 100"})
	_, rtok := srv.AddRunner("r")
	b, err := c.RequestBuild(ctx, rtok, nil)
	require.NoError(t, err)

	tw := c.NewTraceWriter(ctx, b.ID, string(b.Token), TraceWriterOptions{tick: never})
	_, err = io.WriteString(tw, "starting\n")
	require.NoError(t, err)
	tw.Flush()
	srv.SetBuildStatus(b.ID, "canceled") // a user cancels the build
	_, err = io.WriteString(tw, "still running\n")
	require.NoError(t, err)
	tw.Flush()
	<-tw.Canceled()
	require.NoError(t, tw.Close())
	assert.Equal(t, "starting\nstill running\n", string(srv.BuildTrace(b.ID)))
	assert.ErrorIs(t, c.UpdateBuild(ctx, b.ID, rtok, collab.BuildFailed, nil), collab.ErrNotFound, "a canceled build is no longer running")
}

func TestRunnerArtifactsTooLarge(t *testing.T) {
	c, srv := newFake(t)
	ctx := context.Background()
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	srv.Seed.Build(project, collabtest.BuildSpec{})
	_, rtok := srv.AddRunner("r")
	b, err := c.RequestBuild(ctx, rtok, nil)
	require.NoError(t, err)
	srv.SetMaxArtifactsSize(1 << 20)
	big := &genReader{n: 1<<20 + 1}
	_, err = c.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", onlyReader{big}, nil)
	require.ErrorIs(t, err, collab.ErrRequestTooLarge)
	name, data := srv.BuildArtifacts(b.ID)
	assert.Empty(t, name)
	assert.Nil(t, data)
	_, err = c.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", &genReader{n: 1 << 20}, nil)
	require.NoError(t, err, "exactly the limit is accepted")
}
