package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBadBuildIDsAreRefusedBeforeAnyRequest: every call that names a build
// refuses an id below 1 with a *collab.ArgumentError and sends nothing.
func TestBadBuildIDsAreRefusedBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	calls := map[string]func(id int) error{
		"UpdateBuild": func(id int) error { return c.UpdateBuild(ctx, id, testRunnerToken, collab.BuildSuccess, nil) },
		"AppendTrace": func(id int) error {
			_, _, err := c.AppendTrace(ctx, id, testBuildToken, 0, []byte("x"))
			return err
		},
		"UploadArtifacts": func(id int) error {
			_, err := c.UploadArtifacts(ctx, id, testBuildToken, "", strings.NewReader("zip"), nil)
			return err
		},
		"DownloadArtifacts": func(id int) error {
			_, err := c.DownloadArtifacts(ctx, id, testBuildToken, io.Discard)
			return err
		},
		"DeleteArtifacts": func(id int) error { return c.DeleteArtifacts(ctx, id, testBuildToken) },
		"TraceWriter": func(id int) error {
			tw := c.NewTraceWriter(ctx, id, testBuildToken, TraceWriterOptions{})
			_, _ = tw.Write([]byte("log"))
			return tw.Close()
		},
	}
	for name, call := range calls {
		for _, id := range []int{0, -1, -1 << 40} {
			err := call(id)
			var ae *collab.ArgumentError
			require.ErrorAs(t, err, &ae, "%s(%d)", name, id)
			assert.Equal(t, "id", ae.Arg, name)
			assert.ErrorIs(t, err, collab.ErrInvalidArgument, name)
		}
	}
	assert.Zero(t, m.Count(), "no request was sent")
}

// TestUpdateBuildStates: the root package's build states are the ones a
// runner reports; anything else is refused before any request.
func TestUpdateBuildStates(t *testing.T) {
	c, m := newMockClient(t)
	for _, state := range []collab.BuildStatus{"", collab.BuildRunning, collab.BuildSuccess, collab.BuildFailed, collab.BuildCanceled} {
		m.Reply(http.StatusOK, `{}`)
		require.NoError(t, c.UpdateBuild(context.Background(), 3, testRunnerToken, state, nil), state)
	}
	n := m.Count()
	for _, state := range []collab.BuildStatus{collab.BuildPending, collab.BuildSkipped, "done"} {
		err := c.UpdateBuild(context.Background(), 3, testRunnerToken, state, nil)
		var ae *collab.ArgumentError
		require.ErrorAs(t, err, &ae, state)
		assert.Equal(t, "state", ae.Arg)
	}
	assert.Equal(t, n, m.Count(), "no request for a bad state")
}

// TestRunnerErrorsHideEveryToken: the errors this package makes itself (an
// answer that is not a build, a Range header it cannot read) hide the
// runner and build tokens the request carried, with the root package's
// marker, and still unwrap to their cause.
func TestRunnerErrorsHideEveryToken(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)

	m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "0-"+testBuildToken)
	_, _, err := c.AppendTrace(ctx, 9, testBuildToken, 0, []byte("abc"))
	var de *collab.DecodeError
	require.ErrorAs(t, err, &de)
	assert.NotContains(t, err.Error(), testBuildToken)
	assert.Contains(t, err.Error(), "malformed range")
	assert.Contains(t, err.Error(), redacted)

	m.Reply(http.StatusNoContent, "")
	_, err = c.UploadArtifacts(ctx, 9, testBuildToken, "a.zip", bytes.NewReader([]byte("zip")), nil)
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, errNoBuild, "the cause survives redaction")
	assert.NotContains(t, err.Error(), testBuildToken)

	// A server that echoes the runner token from the form body.
	m.Reply(http.StatusForbidden, fmt.Sprintf(`{"message":"token %s refused"}`, testRunnerToken))
	err = c.UpdateBuild(ctx, 9, testRunnerToken, collab.BuildFailed, nil)
	require.Error(t, err)
	assert.Equal(t, "PUT /ci/api/v1/builds/9: 403 Forbidden: token "+redacted+" refused", err.Error())
}

// TestOneMarker: errors, tokens, variables and clone URLs all show a secret
// as the same marker, the root package's.
func TestOneMarker(t *testing.T) {
	assert.Equal(t, "[redacted]", redacted)
	assert.Equal(t, redacted, collab.Secret("t").String())
	assert.Equal(t, "{Key:K Value:[redacted] Public:false}", fmt.Sprint(Variable{Key: "K", Value: "v"}))
	assert.Equal(t, "https://ci:[redacted]@h.example/g/p.git?private_token=[redacted]&x=1",
		RepoURL("https://ci:pw@h.example/g/p.git?private_token=pt&x=1").String())
	assert.Equal(t, "https://h.example/g/p.git", RepoURL("https://h.example/g/p.git").String())
	assert.Equal(t, "https://ci@h.example/g/p.git", RepoURL("https://ci@h.example/g/p.git").String())
}
