package runner

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// names is a collab.Observer that keeps the name of every call.
type names struct {
	mu   sync.Mutex
	seen []string
}

func (n *names) CallStarted(ctx context.Context, ci collab.CallInfo) context.Context {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, ci.Name())
	return ctx
}
func (*names) CallEvent(context.Context, collab.CallEvent) {}
func (*names) CallEnded(context.Context, collab.CallEnd)   {}

// TestEveryCallIsNamedByItsRoute runs every runner endpoint against the
// fake and checks that each call reached the observer (and the logs) under
// its route template, never under "" or its own path.
func TestEveryCallIsNamedByItsRoute(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	obs := &names{}
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()), collab.WithoutRetries(), collab.WithObserver(obs))
	require.NoError(t, err)
	ctx := context.Background()
	project := srv.Seed.Project(srv.Admin, "routes", collab.PrivateVisibility)
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec"})

	reg, err := c.RegisterRunner(ctx, srv.RunnersRegistrationToken(), nil)
	require.NoError(t, err)
	tok := string(reg.Token)
	require.NoError(t, c.VerifyRunner(ctx, tok))
	b, err := c.RequestBuild(ctx, tok, nil)
	require.NoError(t, err)
	require.NotNil(t, b)
	_, _, err = c.AppendTrace(ctx, b.ID, string(b.Token), 0, []byte("log\n"))
	require.NoError(t, err)
	_, err = c.UploadArtifacts(ctx, b.ID, string(b.Token), "a.zip", strings.NewReader("zip"), nil)
	require.NoError(t, err)
	_, err = c.DownloadArtifacts(ctx, b.ID, string(b.Token), &bytes.Buffer{})
	require.NoError(t, err)
	require.NoError(t, c.DeleteArtifacts(ctx, b.ID, string(b.Token)))
	require.NoError(t, c.UpdateBuild(ctx, b.ID, tok, collab.BuildSuccess, nil))
	require.NoError(t, c.DeleteRunner(ctx, tok))

	assert.Equal(t, []string{
		"POST /runners/register",
		"PUT /builds/-1",
		"POST /builds/register",
		"PATCH /builds/:id/trace.txt",
		"POST /builds/:id/artifacts",
		"GET /builds/:id/artifacts",
		"DELETE /builds/:id/artifacts",
		"PUT /builds/:id",
		"DELETE /runners/delete",
	}, obs.seen)
}
