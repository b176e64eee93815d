package collab_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// newExampleClient starts the fake server with one project owned by the
// admin, and returns an admin client.
func newExampleClient() (*collab.Client, *collabtest.Server, int) {
	srv := collabtest.NewServer()
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		panic(err)
	}
	return c, srv, srv.AddProject(srv.AdminID, "Demo", 0)
}

func ExampleNewClient() {
	srv := collabtest.NewServer()
	defer srv.Close()
	c, err := collab.NewClient(srv.URL+"/api/v3/", collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.TrimPrefix(c.BaseURL().Path, ""))
	// Output: /api/v3/
}

func ExampleClient_Sudo() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	srv.AddUser("alice", false)
	alice := c.Sudo("alice")
	p, _, err := alice.Projects.Create(context.Background(), &collab.CreateProjectOptions{Name: "Alice's"})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.PathWithNamespace)
	// Output: alice/alice-s
}

func ExampleErrorResponse() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	_, _, err := c.Projects.Get(context.Background(), "nobody/nothing")
	var er *collab.ErrorResponse
	if errors.As(err, &er) && errors.Is(err, collab.ErrNotFound) {
		fmt.Println(er.StatusCode, er.Message)
	}
	// Output: 404 404 Project Not Found
}

func ExampleProjectsService_All() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	srv.AddProject(srv.AdminID, "Another", 20)
	opt := &collab.ListProjectsOptions{OrderBy: collab.Ptr("name"), Sort: collab.Ptr("asc")}
	for p, err := range c.Projects.All(context.Background(), opt) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(p.Name)
	}
	// Output:
	// Another
	// Demo
}

func ExampleProjectsService_Star() {
	c, srv, pid := newExampleClient()
	defer srv.Close()
	ctx := context.Background()
	p, _, _ := c.Projects.Star(ctx, pid)
	fmt.Println("stars:", p.StarCount)
	_, _, err := c.Projects.Star(ctx, pid)
	fmt.Println("again:", errors.Is(err, collab.ErrNotModified))
	// Output:
	// stars: 1
	// again: true
}

func ExampleProjectsService_UploadFile() {
	c, srv, pid := newExampleClient()
	defer srv.Close()
	f, _, err := c.Projects.UploadFile(context.Background(), pid, strings.NewReader("hello"), "hello.txt")
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Alt, f.IsImage)
	// Output: hello false
}

func ExampleGroupsService_Create() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	g, _, err := c.Groups.Create(context.Background(), &collab.CreateGroupOptions{Name: "Docs", Path: "docs",
		VisibilityLevel: collab.Ptr(collab.InternalVisibility)})
	if err != nil {
		panic(err)
	}
	fmt.Println(g.Path, g.VisibilityLevel)
	// Output: docs internal
}

func ExampleProjectMembersService_Add() {
	c, srv, pid := newExampleClient()
	defer srv.Close()
	bob := srv.AddUser("bob", false)
	m, _, err := c.ProjectMembers.Add(context.Background(), pid, bob.ID, collab.DeveloperAccess)
	if err != nil {
		panic(err)
	}
	fmt.Println(m.Username, m.AccessLevel)
	// Output: bob developer
}

func ExampleGroupMembersService_Add() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	ctx := context.Background()
	g, _, _ := c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Ops", Path: "ops"})
	bob := srv.AddUser("bob", false)
	_, _, _ = c.GroupMembers.Add(ctx, g.ID, bob.ID, collab.ReporterAccess)
	_, _, err := c.GroupMembers.Add(ctx, g.ID, bob.ID, collab.ReporterAccess)
	fmt.Println(errors.Is(err, collab.ErrConflict))
	// Output: true
}

func ExampleHooksService_Add() {
	c, srv, pid := newExampleClient()
	defer srv.Close()
	h, _, err := c.Hooks.Add(context.Background(), pid, &collab.HookOptions{URL: "https://ci.example.com/hook", NoteEvents: collab.Ptr(true)})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.URL, h.PushEvents, h.NoteEvents)
	// Output: https://ci.example.com/hook true true
}

func ExampleBranchesService_Protect() {
	c, srv, pid := newExampleClient()
	defer srv.Close()
	srv.AddBranch(pid, "release/1.0", "")
	b, _, err := c.Branches.Protect(context.Background(), pid, "release/1.0")
	if err != nil {
		panic(err)
	}
	fmt.Println(b.Name, b.Protected)
	// Output: release/1.0 true
}

func ExampleSettingsService_Update() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	s, _, err := c.Settings.Update(context.Background(), &collab.UpdateSettingsOptions{
		SignupEnabled: collab.Ptr(false), RestrictedVisibilityLevels: &[]int{20},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.SignupEnabled, s.RestrictedVisibilityLevels)
	// Output: false [20]
}

func ExampleJobQueueService_JobStats() {
	srv := collabtest.NewServer()
	defer srv.Close()
	c, _ := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithJobQueuePath("sidekiq"))
	st, _, err := c.JobQueue.JobStats(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Jobs.Enqueued)
	// Output: 0
}
