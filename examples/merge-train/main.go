// Command merge-train merges every open merge request whose builds on the
// source branch's head all succeeded, guarding each merge with that head's
// sha, and reports the ones it could not merge. It runs against the embedded
// fake server, seeded with a few merge requests, unless COLLAB_URL,
// COLLAB_TOKEN and COLLAB_PROJECT are set.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/exampleenv"
)

func main() { exampleenv.Main("merge-train", run) }

func run(ctx context.Context) error {
	env, err := exampleenv.OpenProject(seed)
	if err != nil {
		return err
	}
	defer env.Close()
	c, err := collab.NewClient(env.URL, collab.WithPrivateToken(env.Token))
	if err != nil {
		return err
	}
	pid := env.Project

	merged, waiting, refused := 0, 0, 0
	opt := &collab.ListMergeRequestsOptions{State: collab.Ptr(collab.MergeRequestOpened), Sort: collab.Ptr(collab.SortAsc)}
	for mr, err := range c.MergeRequests.All(ctx, pid, opt) {
		if err != nil {
			return fmt.Errorf("listing merge requests: %w", err)
		}
		// !IID is the number people see; the calls below take the global ID.
		name := fmt.Sprintf("!%d (id %d)", mr.IID, mr.ID)
		branch, _, err := c.Branches.Get(ctx, pid, mr.SourceBranch)
		if err != nil {
			return fmt.Errorf("%s: reading %s: %w", name, mr.SourceBranch, err)
		}
		head := branch.Commit.ID
		green, err := buildsSucceeded(ctx, c, pid, head)
		if err != nil {
			return fmt.Errorf("%s: reading builds: %w", name, err)
		}
		if !green {
			waiting++
			fmt.Printf("%s %q: builds of %.8s not all green, skipped\n", name, mr.Title, head)
			continue
		}
		_, _, err = c.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{SHA: collab.Ptr(head)})
		switch {
		case err == nil:
			merged++
			fmt.Printf("%s %q: merged at %.8s\n", name, mr.Title, head)
		case errors.Is(err, collab.ErrConflict):
			refused++
			fmt.Printf("%s %q: the branch moved since its builds ran, skipped\n", name, mr.Title)
		case errors.Is(err, collab.ErrNotAcceptable), errors.Is(err, collab.ErrMethodNotAllowed):
			// Servers disagree on which of the two means what; both mean "not mergeable now".
			refused++
			fmt.Printf("%s %q: cannot be merged (%v)\n", name, mr.Title, err)
		default:
			return fmt.Errorf("%s: merging: %w", name, err)
		}
	}
	fmt.Printf("merged %d, waiting on builds %d, refused %d\n", merged, waiting, refused)
	return nil
}

// buildsSucceeded reports whether a commit has builds and all succeeded.
func buildsSucceeded(ctx context.Context, c *collab.Client, pid any, sha string) (bool, error) {
	n := 0
	for b, err := range c.Builds.AllForCommit(ctx, pid, sha, nil) {
		if err != nil {
			return false, err
		}
		if b.Status != collab.BuildSuccess {
			return false, nil
		}
		n++
	}
	return n > 0, nil
}

// seed makes a project with three merge requests: one green, one whose
// build failed, and one green but in conflict with its target.
func seed(srv *collabtest.Server) int {
	p := srv.Seed.Project(srv.Admin, "Train", collab.InternalVisibility)
	for _, mr := range []struct {
		branch, title, status string
		conflict              bool
	}{
		{"feature/login", "Add login", "success", false},
		{"feature/search", "Faster search", "failed", false},
		{"feature/theme", "New theme", "success", true},
	} {
		b := srv.Seed.Branch(p, mr.branch)
		srv.Seed.Build(p, collabtest.BuildSpec{Ref: mr.branch, Commit: b.Commit.ID, Status: mr.status})
		m := srv.Seed.MergeRequest(p, srv.Admin, mr.branch, "master", mr.title)
		srv.SetMergeConflict(m.ID, mr.conflict)
	}
	return p.ID
}
