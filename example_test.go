package collab_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// newExampleClient starts the fake server with one project owned by the
// admin, and returns an admin client.
func newExampleClient() (*collab.Client, *collabtest.Server, *collab.Project) {
	srv, err := collabtest.NewServer()
	if err != nil {
		panic(err)
	}
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		panic(err)
	}
	return c, srv, srv.Seed.Project(srv.Admin, "Demo", collab.PrivateVisibility)
}

func ExampleNewClient() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
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
	srv.Seed.Project(srv.Admin, "Another", collab.PublicVisibility)
	opt := &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)}
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
	c, srv, project := newExampleClient()
	pid := project.ID
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
	c, srv, project := newExampleClient()
	pid := project.ID
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
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	bob := srv.AddUser("bob", false)
	m, _, err := c.ProjectMembers.Add(context.Background(), pid, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.DeveloperAccess})
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
	_, _, _ = c.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.ReporterAccess})
	_, _, err := c.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.ReporterAccess})
	fmt.Println(errors.Is(err, collab.ErrConflict))
	// Output: true
}

func ExampleHooksService_Add() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	h, _, err := c.Hooks.Add(context.Background(), pid, &collab.AddHookOptions{URL: "https://ci.example.com/hook", NoteEvents: collab.Ptr(true)})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.URL, h.PushEvents, h.NoteEvents)
	// Output: https://ci.example.com/hook true true
}

func ExampleBranchesService_Protect() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	srv.Seed.Branch(project, "release/1.0")
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
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, _ := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithJobQueuePath("sidekiq"))
	st, _, err := c.JobQueue.JobStats(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(st.Jobs.Enqueued)
	// Output: 0
}

func ExampleIssuesService_All() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	for _, title := range []string{"Crash on save", "Slow search", "Typo"} {
		c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: title})
	}
	opt := &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened), Sort: collab.Ptr(collab.SortAsc)}
	for issue, err := range c.Issues.All(ctx, pid, opt) {
		if err != nil {
			fmt.Println("error:", err) // an error is always the last element
			break
		}
		// IID is the #number the project shows; ID is what the methods take.
		fmt.Printf("#%d (id %d) %s\n", issue.IID, issue.ID, issue.Title)
	}
	// Output:
	// #1 (id 5) Crash on save
	// #2 (id 7) Slow search
	// #3 (id 9) Typo
}

// A user reports "#2": find its global ID before changing it.
func ExampleIssuesService_GetByIID() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	for _, title := range []string{"Crash on save", "Slow search"} {
		c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: title})
	}
	issue, _, err := c.Issues.GetByIID(ctx, pid, 2)
	if err != nil {
		panic(err)
	}
	closed, _, err := c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	if err != nil {
		panic(err)
	}
	fmt.Printf("#%d (id %d) %s: %s\n", closed.IID, closed.ID, closed.Title, closed.State)
	_, _, err = c.Issues.GetByIID(ctx, pid, 9)
	fmt.Println(errors.Is(err, collab.ErrNotFound), err)
	// Output:
	// #2 (id 7) Slow search: closed
	// true collab: project 3 has no issue #9: collab: not found
}

func ExampleMergeRequestsService_Merge() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	head := srv.Seed.Branch(project, "feature").Commit.ID
	mr, _, _ := c.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Feature"})
	fmt.Printf("!%d (id %d) %s\n", mr.IID, mr.ID, mr.Title)

	// The sha guard: merge only what was reviewed.
	_, _, err := c.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{SHA: collab.Ptr("0123abcd")})
	fmt.Println("stale sha is a conflict:", errors.Is(err, collab.ErrConflict))
	merged, _, err := c.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{SHA: collab.Ptr(head)})
	if err != nil {
		panic(err)
	}
	fmt.Println(merged.State)
	// Output:
	// !1 (id 5) Feature
	// stale sha is a conflict: true
	// merged
}

// A user mentions "!1": find its global ID before acting on it.
func ExampleMergeRequestsService_GetByIID() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	srv.Seed.Branch(project, "feature")
	c.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Feature"})
	mr, _, err := c.MergeRequests.GetByIID(ctx, pid, 1)
	if err != nil {
		panic(err)
	}
	commits, _, err := c.MergeRequests.Commits(ctx, pid, mr.ID)
	if err != nil {
		panic(err)
	}
	fmt.Printf("!%d (id %d) %s: %d commit(s)\n", mr.IID, mr.ID, mr.Title, len(commits))
	// Output: !1 (id 5) Feature: 1 commit(s)
}

func ExampleLabelsService_Create() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	l, _, _ := c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "#d9534f"})
	fmt.Println(l.Name, l.Color)
	// Rejected before any request: not #RRGGBB.
	_, _, err := c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "red"})
	var arg *collab.ArgumentError
	if errors.As(err, &arg) && errors.Is(err, collab.ErrInvalidArgument) {
		fmt.Println(arg.Arg, arg.Reason)
	}
	// Output:
	// bug #d9534f
	// opt.Color must be # and six hex digits, got "red"
}

// Labels are addressed by name in every call.
func ExampleLabelsService_Update() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "#d9534f"})
	l, _, err := c.Labels.Update(ctx, pid, "bug", &collab.UpdateLabelOptions{NewName: collab.Ptr("defect")})
	if err != nil {
		panic(err)
	}
	l, _, err = c.Labels.Subscribe(ctx, pid, l.Name)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Name, l.Subscribed)
	// Output: defect true
}

func ExampleNotesService_CreateIssueNote() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	issue := srv.Seed.Issue(project, srv.Admin, "Crash").ID
	n, _, err := c.Notes.CreateIssueNote(context.Background(), pid, issue, &collab.CreateNoteOptions{Body: "Reproduced on 1.2"})
	if err != nil {
		panic(err)
	}
	fmt.Println(n.NoteableType, n.Body)
	// Output: Issue Reproduced on 1.2
}

func ExampleMilestonesService_Create() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ms, _, err := c.Milestones.Create(context.Background(), pid, &collab.CreateMilestoneOptions{Title: "v1.0", DueDate: collab.Ptr("2030-01-31")})
	if err != nil {
		panic(err)
	}
	fmt.Println(ms.Title, ms.State, ms.DueDate.Format("2006-01-02"))
	// Output: v1.0 active 2030-01-31
}

func ExampleAwardEmojiService_CreateIssueAward() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	issue := srv.Seed.Issue(project, srv.Admin, "Ship it").ID
	a, _, err := c.AwardEmoji.CreateIssueAward(context.Background(), pid, issue, "thumbsup")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Name, a.AwardableType)
	// Output: thumbsup Issue
}

// A call the client refuses before sending names the argument.
func ExampleArgumentError() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	_, _, err := c.MergeRequests.Create(context.Background(), pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", Title: "Feature"})
	var arg *collab.ArgumentError
	if errors.As(err, &arg) {
		fmt.Println(arg.Arg, arg.Reason, errors.Is(err, collab.ErrInvalidArgument))
	}
	// Output: opt.TargetBranch is required true
}

func ExampleUsersService_Current() {
	c, srv, _ := newExampleClient()
	defer srv.Close()
	me, _, err := c.Users.Current(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(me.Username, me.IsAdmin, me.PrivateToken) // the token never prints
	// Output: root true [redacted]
}

func ExampleIssuesService_AddLabels() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	id := srv.Seed.Issue(project, srv.Admin, "Crash on save", srv.Seed.Label(project, "ui", "#428BCA")).ID
	is, _, err := c.Issues.AddLabels(context.Background(), pid, id, "bug")
	if err != nil {
		panic(err)
	}
	fmt.Println(is.Labels)
	// Output: [ui bug]
}
