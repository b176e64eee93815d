package bench

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gitlab "github.com/xanzy/go-gitlab"
)

// TestGoGitlabForkRelation: go-gitlab v0.5.1, a client written for servers of
// the 8.x era, reads the link record the fake answers for a new fork
// relation: both project ids and the link's own id.
func TestGoGitlabForkRelation(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	from := srv.Seed.Project(srv.Admin, "upstream", collab.PrivateVisibility).ID
	to := srv.Seed.Project(srv.Admin, "downstream", collab.PrivateVisibility).ID

	gl := gitlab.NewClient(nil, srv.AdminToken)
	require.NoError(t, gl.SetBaseURL(srv.URL+"/api/v3"))
	rel, resp, err := gl.Projects.CreateProjectForkRelation(to, from)
	require.NoError(t, err)
	assert.Equal(t, 201, resp.StatusCode)
	assert.Equal(t, to, rel.ForkedToProjectID)
	assert.Equal(t, from, rel.ForkedFromProjectID)
	assert.NotZero(t, rel.ID)
	require.NotNil(t, rel.CreatedAt)
	require.NotNil(t, rel.UpdatedAt)

	_, resp, err = gl.Projects.CreateProjectForkRelation(to, from)
	require.Error(t, err)
	assert.Equal(t, 409, resp.StatusCode)
}

// TestCurlForkRelation: the same call from curl, as a script would make it.
func TestCurlForkRelation(t *testing.T) {
	curl := needTool(t, "curl")
	srv := collabtest.NewTestServer(t)
	from := srv.Seed.Project(srv.Admin, "upstream", collab.PrivateVisibility).ID
	to := srv.Seed.Project(srv.Admin, "downstream", collab.PrivateVisibility).ID
	url := srv.URL + "/api/v3/projects/" + strconv.Itoa(to) + "/fork/" + strconv.Itoa(from)
	out, err := exec.Command(curl, "-sS", "-X", "POST", "-H", "PRIVATE-TOKEN: "+srv.AdminToken, "-w", "\n%{http_code}", url).Output()
	require.NoError(t, err)
	body, status, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	assert.Equal(t, "201", status)
	assert.Contains(t, body, `"forked_to_project_id":`+strconv.Itoa(to))
	assert.Contains(t, body, `"forked_from_project_id":`+strconv.Itoa(from))
	for _, key := range []string{`"id":`, `"created_at":`, `"updated_at":`} {
		assert.Contains(t, body, key)
	}
	assert.NotContains(t, body, `"name":`, "a link record, not a project")
}
