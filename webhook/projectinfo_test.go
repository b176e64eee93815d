package webhook_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectInfoer is every event kind that describes its project.
type projectInfoer interface{ ProjectInfo() webhook.Project }

// TestProjectInfoOnEveryPayload: every issue, merge request, note, push and
// tag push payload of the test data names its project through ProjectInfo,
// those without a project key included: the name and the path with
// namespace are never empty, and a payload's own project comes back as it
// is.
func TestProjectInfoOnEveryPayload(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "payloads", "*.json"))
	require.NoError(t, err)
	withoutProject := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		ev, err := webhook.ParsePayload(http.Header{}, body)
		if err != nil {
			continue // payloads of later releases' kinds are the parser's tests
		}
		pi, ok := ev.(projectInfoer)
		if !ok {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := pi.ProjectInfo()
			assert.NotEmpty(t, got.Name)
			assert.NotEmpty(t, got.PathWithNamespace)
			assert.NotEmpty(t, got.WebURL)
			if own := projectField(ev); own != nil && own.PathWithNamespace != "" && own.WebURL != "" {
				assert.Equal(t, own.PathWithNamespace, got.PathWithNamespace, "the payload's own project")
				assert.Equal(t, own.Name, got.Name)
			}
		})
		if !bytes.Contains(body, []byte(`"project":{`)) && !bytes.Contains(body, []byte(`"project": {`)) {
			withoutProject++
		}
	}
	assert.Positive(t, withoutProject, "the test data holds payloads without a project key")
}

func projectField(ev webhook.Event) *webhook.Project {
	switch e := ev.(type) {
	case *webhook.IssueEvent:
		return e.Project
	case *webhook.MergeRequestEvent:
		return e.Project
	case *webhook.NoteEvent:
		return e.Project
	case *webhook.PushEvent:
		return e.Project
	case *webhook.TagPushEvent:
		return e.Project
	}
	return nil
}

func TestProjectInfoFallbacks(t *testing.T) {
	repo := &webhook.Repository{Name: "Diaspora", URL: "git@example.com:mike/diaspora.git",
		Homepage: "http://example.com/mike/diaspora"}
	got := (&webhook.IssueEvent{Repository: repo}).ProjectInfo()
	assert.Equal(t, "Diaspora", got.Name)
	assert.Equal(t, "mike/diaspora", got.PathWithNamespace)
	assert.Equal(t, "http://example.com/mike/diaspora", got.WebURL)
	assert.Equal(t, "git@example.com:mike/diaspora.git", got.GitSSHURL)

	target := &webhook.Project{Name: "Target", PathWithNamespace: "g/target"}
	mr := &webhook.MergeRequestEvent{ObjectAttributes: &webhook.MergeRequestAttributes{Target: target}}
	assert.Equal(t, *target, mr.ProjectInfo(), "a merge request without project or repository names its target")
	old := &webhook.Project{Name: "Old", Homepage: "http://example.com/g/old", SSHURL: "ssh://git@example.com/g/old.git"}
	got = (&webhook.NoteEvent{Project: old}).ProjectInfo()
	assert.Equal(t, "g/old", got.PathWithNamespace, "older spellings fill the current fields")
	assert.Equal(t, "http://example.com/g/old", got.WebURL)
	assert.Equal(t, "ssh://git@example.com/g/old.git", got.GitSSHURL)
	assert.Equal(t, "Old", old.Name)
	assert.Empty(t, old.WebURL, "the event itself is left as it arrived")

	for _, e := range []projectInfoer{&webhook.IssueEvent{}, &webhook.MergeRequestEvent{}, &webhook.NoteEvent{}, &webhook.PushEvent{}, &webhook.TagPushEvent{}} {
		assert.Equal(t, webhook.Project{}, e.ProjectInfo(), "neither: the zero project, no panic")
	}
	assert.Empty(t, (&webhook.NoteEvent{Repository: &webhook.Repository{Homepage: "not a url"}}).ProjectInfo().PathWithNamespace)
}
