package exampleenv

import (
	"context"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func TestOpenStartsTheSeededFakeWithoutURLAndToken(t *testing.T) {
	t.Setenv("COLLAB_URL", "")
	t.Setenv("COLLAB_TOKEN", "")
	var seeded *collabtest.Server
	pid := 0
	env, err := Open(func(srv *collabtest.Server) {
		seeded, pid = srv, srv.Seed.Project(srv.Admin, "Demo", collab.PrivateVisibility).ID
	})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Fake == nil || seeded != env.Fake {
		t.Fatalf("Fake = %v, seed got %v: want the started fake, seeded", env.Fake, seeded)
	}
	// A private project: only its owner, the administrator, sees it.
	c, err := collab.NewClient(env.URL, collab.WithPrivateToken(env.Token))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Projects.Get(context.Background(), pid); err != nil {
		t.Fatalf("the client does not see the seeded project as the fake's administrator: %v", err)
	}
}

func TestOpenProjectNeedsAllThreeForARealServer(t *testing.T) {
	// The URL names no server: no request is sent.
	t.Setenv("COLLAB_URL", "http://127.0.0.1:1")
	t.Setenv("COLLAB_TOKEN", "secret")
	t.Setenv("COLLAB_PROJECT", "")
	env, err := OpenProject(func(srv *collabtest.Server) int {
		return srv.Seed.Project(srv.Admin, "Demo", collab.InternalVisibility).ID
	})
	if err != nil {
		t.Fatal(err)
	}
	if env.Fake == nil || env.Project == 0 {
		t.Fatalf("without COLLAB_PROJECT: Fake %v, Project %v; want the fake and its seeded project", env.Fake, env.Project)
	}
	env.Close()

	t.Setenv("COLLAB_PROJECT", "team/app")
	env, err = OpenProject(func(*collabtest.Server) int { t.Fatal("seed called for a real server"); return 0 })
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	if env.Fake != nil || env.Project != "team/app" {
		t.Fatalf("with all three: Fake %v, Project %v; want no fake and the path", env.Fake, env.Project)
	}
}

func TestProjectID(t *testing.T) {
	for in, want := range map[string]any{"42": 42, "team/app": "team/app", "": ""} {
		if got := ProjectID(in); got != want {
			t.Errorf("ProjectID(%q) = %#v, want %#v", in, got, want)
		}
	}
}
