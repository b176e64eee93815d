// Command quickstart runs the main job of the SDK: it creates a group and a
// project, adds a member and a hook, protects a branch, opens and closes an
// issue (telling its #IID from its ID), stars and archives the project,
// uploads a file, lists projects with the iterator, and handles typed
// errors. It runs against the embedded fake server unless COLLAB_URL and
// COLLAB_TOKEN are set.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/exampleenv"
)

func main() { exampleenv.Main("quickstart", run) }

func run(ctx context.Context) error {
	memberID := 0 // someone to add to the project; the fake has alice
	env, err := exampleenv.Open(func(srv *collabtest.Server) {
		memberID = srv.Seed.User("alice").ID
	})
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := collab.NewClient(env.URL, collab.WithPrivateToken(env.Token))
	if err != nil {
		return err
	}
	p, err := createProject(ctx, c, time.Now().Format("150405"))
	if err != nil {
		return err
	}
	t := tour{ctx: ctx, c: c, p: p}
	for _, step := range []func() error{
		func() error { return t.memberAndHook(memberID) }, t.protect, t.issue, t.starAndArchive, t.upload, t.list, t.typedErrors,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	fmt.Println("done")
	return nil
}

// createProject is step 1: a group and a project in it.
func createProject(ctx context.Context, c *collab.Client, suffix string) (*collab.Project, error) {
	g, _, err := c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Quickstart " + suffix, Path: "quickstart-" + suffix})
	if err != nil {
		return nil, fmt.Errorf("creating the group: %w", err)
	}
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{
		Name: "Docs Site", Path: collab.Ptr("docs.site"), NamespaceID: collab.Ptr(g.ID), Description: collab.Ptr("Quickstart demo"),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the project: %w", err)
	}
	fmt.Printf("1. created group %q and project %q (id %d)\n", g.Path, p.PathWithNamespace, p.ID)
	return p, nil
}

// tour runs the other steps on the project.
type tour struct {
	ctx context.Context
	c   *collab.Client
	p   *collab.Project
}

// memberAndHook is step 2: a member (on the fake, which has one to add)
// and a hook.
func (t tour) memberAndHook(memberID int) error {
	if memberID != 0 {
		m, _, err := t.c.ProjectMembers.Add(t.ctx, t.p.ID, &collab.AddMemberOptions{UserID: memberID, AccessLevel: collab.DeveloperAccess})
		if err != nil {
			return fmt.Errorf("adding a member: %w", err)
		}
		fmt.Printf("2. added %s as %s", m.Username, m.AccessLevel)
	} else {
		fmt.Print("2. (no member added on a real server)")
	}
	h, _, err := t.c.Hooks.Add(t.ctx, t.p.ID, &collab.AddHookOptions{URL: "https://ci.example.com/hook", IssuesEvents: collab.Ptr(true)})
	if err != nil {
		return fmt.Errorf("adding a hook: %w", err)
	}
	fmt.Printf(" and hook %d -> %s\n", h.ID, h.URL)
	return nil
}

// protect is step 3: protect the default branch.
func (t tour) protect() error {
	b, _, err := t.c.Branches.Protect(t.ctx, t.p.ID, t.p.DefaultBranch)
	if err != nil {
		return fmt.Errorf("protecting %s: %w", t.p.DefaultBranch, err)
	}
	fmt.Printf("3. branch %s protected: %v\n", b.Name, b.Protected)
	return nil
}

// issue is step 4: an issue. IID is the #number people see in the project;
// ID is global and is what Update, Notes and the other calls take. GetByIID
// goes from the one a user gives you to the record.
func (t tour) issue() error {
	is, _, err := t.c.Issues.Create(t.ctx, t.p.ID, &collab.CreateIssueOptions{Title: "Broken link on the home page"})
	if err != nil {
		return fmt.Errorf("opening an issue: %w", err)
	}
	found, _, err := t.c.Issues.GetByIID(t.ctx, t.p.ID, is.IID)
	if err != nil {
		return fmt.Errorf("finding #%d: %w", is.IID, err)
	}
	closed, _, err := t.c.Issues.Update(t.ctx, t.p.ID, found.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	if err != nil {
		return fmt.Errorf("closing #%d (id %d): %w", found.IID, found.ID, err)
	}
	fmt.Printf("4. issue #%d (id %d) is %s\n", closed.IID, closed.ID, closed.State)
	return nil
}

// starAndArchive is step 5.
func (t tour) starAndArchive() error {
	starred, _, err := t.c.Projects.Star(t.ctx, t.p.ID)
	if err != nil {
		return fmt.Errorf("starring: %w", err)
	}
	archived, _, err := t.c.Projects.Archive(t.ctx, t.p.ID)
	if err != nil {
		return fmt.Errorf("archiving: %w", err)
	}
	fmt.Printf("5. stars: %d, archived: %v\n", starred.StarCount, archived.Archived)
	return nil
}

// upload is step 6: upload a file (streamed, never held in memory).
func (t tour) upload() error {
	f, _, err := t.c.Projects.UploadFile(t.ctx, t.p.ID, strings.NewReader("# Notes\nHello from the quickstart.\n"), "notes.md")
	if err != nil {
		return fmt.Errorf("uploading: %w", err)
	}
	fmt.Printf("6. uploaded: %s\n", f.Markdown)
	return nil
}

// list is step 7: list projects with the iterator.
func (t tour) list() error {
	n := 0
	opt := &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)}
	for proj, err := range t.c.Projects.All(t.ctx, opt) {
		if err != nil {
			return fmt.Errorf("listing: %w", err)
		}
		n++
		if n <= 5 {
			fmt.Printf("7. project %d: %s\n", n, proj.PathWithNamespace)
		}
	}
	fmt.Printf("7. %d project(s) in all\n", n)
	return nil
}

// typedErrors is step 8: the errors a caller tells apart.
func (t tour) typedErrors() error {
	_, _, err := t.c.Projects.Get(t.ctx, "no-such-group/no-such-project")
	switch {
	case errors.Is(err, collab.ErrNotFound):
		fmt.Println("8. a missing project is ErrNotFound:", err)
	default:
		return fmt.Errorf("expected ErrNotFound, got %v", err)
	}
	_, _, err = t.c.Projects.Star(t.ctx, t.p.ID)
	if !errors.Is(err, collab.ErrNotModified) {
		return fmt.Errorf("expected ErrNotModified on a second star, got %v", err)
	}
	fmt.Println("8. a second star is ErrNotModified:", err)
	_, _, err = t.c.Labels.Create(t.ctx, t.p.ID, &collab.CreateLabelOptions{Name: "bug", Color: "red"})
	var arg *collab.ArgumentError
	if !errors.As(err, &arg) || !errors.Is(err, collab.ErrInvalidArgument) {
		return fmt.Errorf("expected an *ArgumentError for a bad colour, got %v", err)
	}
	fmt.Printf("8. refused before sending: %s (%s)\n", arg.Arg, arg.Reason)
	return nil
}
