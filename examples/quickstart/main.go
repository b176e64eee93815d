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
	"os"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/exampleenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	memberID := 0 // someone to add to the project; the fake has alice
	env, err := exampleenv.Open(func(srv *collabtest.Server) {
		memberID = srv.AddUser("alice", false).ID
	})
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := collab.NewClient(env.URL, collab.WithPrivateToken(env.Token))
	if err != nil {
		return err
	}
	suffix := time.Now().Format("150405")

	// 1. A group and a project in it.
	g, _, err := c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Quickstart " + suffix, Path: "quickstart-" + suffix})
	if err != nil {
		return fmt.Errorf("creating the group: %w", err)
	}
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{
		Name: "Docs Site", Path: collab.Ptr("docs.site"), NamespaceID: collab.Ptr(g.ID), Description: collab.Ptr("Quickstart demo"),
	})
	if err != nil {
		return fmt.Errorf("creating the project: %w", err)
	}
	fmt.Printf("1. created group %q and project %q (id %d)\n", g.Path, p.PathWithNamespace, p.ID)

	// 2. A member and a hook.
	if memberID != 0 {
		m, _, err := c.ProjectMembers.Add(ctx, p.ID, &collab.AddMemberOptions{UserID: memberID, AccessLevel: collab.DeveloperAccess})
		if err != nil {
			return fmt.Errorf("adding a member: %w", err)
		}
		fmt.Printf("2. added %s as %s", m.Username, m.AccessLevel)
	} else {
		fmt.Print("2. (no member added on a real server)")
	}
	h, _, err := c.Hooks.Add(ctx, p.ID, &collab.AddHookOptions{URL: "https://ci.example.com/hook", IssuesEvents: collab.Ptr(true)})
	if err != nil {
		return fmt.Errorf("adding a hook: %w", err)
	}
	fmt.Printf(" and hook %d -> %s\n", h.ID, h.URL)

	// 3. Protect the default branch.
	b, _, err := c.Branches.Protect(ctx, p.ID, p.DefaultBranch)
	if err != nil {
		return fmt.Errorf("protecting %s: %w", p.DefaultBranch, err)
	}
	fmt.Printf("3. branch %s protected: %v\n", b.Name, b.Protected)

	// 4. An issue. IID is the #number people see in the project; ID is global
	// and is what Update, Notes and the other calls take. GetByIID goes from
	// the one a user gives you to the record.
	is, _, err := c.Issues.Create(ctx, p.ID, &collab.CreateIssueOptions{Title: "Broken link on the home page"})
	if err != nil {
		return fmt.Errorf("opening an issue: %w", err)
	}
	found, _, err := c.Issues.GetByIID(ctx, p.ID, is.IID)
	if err != nil {
		return fmt.Errorf("finding #%d: %w", is.IID, err)
	}
	closed, _, err := c.Issues.Update(ctx, p.ID, found.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	if err != nil {
		return fmt.Errorf("closing #%d (id %d): %w", found.IID, found.ID, err)
	}
	fmt.Printf("4. issue #%d (id %d) is %s\n", closed.IID, closed.ID, closed.State)

	// 5. Star and archive.
	starred, _, err := c.Projects.Star(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("starring: %w", err)
	}
	archived, _, err := c.Projects.Archive(ctx, p.ID)
	if err != nil {
		return fmt.Errorf("archiving: %w", err)
	}
	fmt.Printf("5. stars: %d, archived: %v\n", starred.StarCount, archived.Archived)

	// 6. Upload a file (streamed, never held in memory).
	f, _, err := c.Projects.UploadFile(ctx, p.ID, strings.NewReader("# Notes\nHello from the quickstart.\n"), "notes.md")
	if err != nil {
		return fmt.Errorf("uploading: %w", err)
	}
	fmt.Printf("6. uploaded: %s\n", f.Markdown)

	// 7. List projects with the iterator.
	n := 0
	opt := &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)}
	for proj, err := range c.Projects.All(ctx, opt) {
		if err != nil {
			return fmt.Errorf("listing: %w", err)
		}
		n++
		if n <= 5 {
			fmt.Printf("7. project %d: %s\n", n, proj.PathWithNamespace)
		}
	}
	fmt.Printf("7. %d project(s) in all\n", n)

	// 8. Typed errors.
	_, _, err = c.Projects.Get(ctx, "no-such-group/no-such-project")
	switch {
	case errors.Is(err, collab.ErrNotFound):
		fmt.Println("8. a missing project is ErrNotFound:", err)
	default:
		return fmt.Errorf("expected ErrNotFound, got %v", err)
	}
	_, _, err = c.Projects.Star(ctx, p.ID)
	if !errors.Is(err, collab.ErrNotModified) {
		return fmt.Errorf("expected ErrNotModified on a second star, got %v", err)
	}
	fmt.Println("8. a second star is ErrNotModified:", err)
	_, _, err = c.Labels.Create(ctx, p.ID, &collab.CreateLabelOptions{Name: "bug", Color: "red"})
	var arg *collab.ArgumentError
	if !errors.As(err, &arg) || !errors.Is(err, collab.ErrInvalidArgument) {
		return fmt.Errorf("expected an *ArgumentError for a bad colour, got %v", err)
	}
	fmt.Printf("8. refused before sending: %s (%s)\n", arg.Arg, arg.Reason)
	fmt.Println("done")
	return nil
}
