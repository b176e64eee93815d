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
	"os"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "merge-train:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base, token, project := os.Getenv("COLLAB_URL"), os.Getenv("COLLAB_TOKEN"), os.Getenv("COLLAB_PROJECT")
	if base == "" || token == "" || project == "" {
		srv := collabtest.NewServer()
		defer srv.Close()
		base, token, project = srv.URL, srv.AdminToken, strconv.Itoa(seed(srv))
		fmt.Println("using the embedded fake server at", base)
	}
	c, err := collab.NewClient(base, collab.WithPrivateToken(token))
	if err != nil {
		return err
	}
	var pid any = project
	if id, err := strconv.Atoi(project); err == nil {
		pid = id
	}

	merged, waiting, refused := 0, 0, 0
	for mr, err := range c.MergeRequests.All(ctx, pid, &collab.ListMergeRequestsOptions{State: collab.Ptr("opened"), Sort: collab.Ptr("asc")}) {
		if err != nil {
			return fmt.Errorf("listing merge requests: %w", err)
		}
		branch, _, err := c.Branches.Get(ctx, pid, mr.SourceBranch)
		if err != nil {
			return fmt.Errorf("!%d: reading %s: %w", mr.IID, mr.SourceBranch, err)
		}
		head := branch.Commit.ID
		green, err := buildsSucceeded(ctx, c, pid, head)
		if err != nil {
			return fmt.Errorf("!%d: reading builds: %w", mr.IID, err)
		}
		if !green {
			waiting++
			fmt.Printf("!%d %q: builds of %.8s not all green, skipped\n", mr.IID, mr.Title, head)
			continue
		}
		_, _, err = c.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeOptions{SHA: collab.Ptr(head)})
		switch {
		case err == nil:
			merged++
			fmt.Printf("!%d %q: merged at %.8s\n", mr.IID, mr.Title, head)
		case errors.Is(err, collab.ErrConflict):
			refused++
			fmt.Printf("!%d %q: the branch moved since its builds ran, skipped\n", mr.IID, mr.Title)
		case errors.Is(err, collab.ErrNotAcceptable), errors.Is(err, collab.ErrMethodNotAllowed):
			// The contract and deployed servers swap these two; both mean "not mergeable now".
			refused++
			fmt.Printf("!%d %q: cannot be merged (%v)\n", mr.IID, mr.Title, err)
		default:
			return fmt.Errorf("!%d: merging: %w", mr.IID, err)
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
		if b.Status != "success" {
			return false, nil
		}
		n++
	}
	return n > 0, nil
}

// seed makes a project with three merge requests: one green, one whose
// build failed, and one green but in conflict with its target.
func seed(srv *collabtest.Server) int {
	pid := srv.AddProject(srv.AdminID, "Train", 10)
	for _, mr := range []struct {
		branch, title, status string
		conflict              bool
	}{
		{"feature/login", "Add login", "success", false},
		{"feature/search", "Faster search", "failed", false},
		{"feature/theme", "New theme", "success", true},
	} {
		sha := srv.AddBranch(pid, mr.branch, "")
		srv.AddBuild(pid, collabtest.BuildSpec{Ref: mr.branch, Commit: sha, Status: mr.status})
		id := srv.AddMergeRequest(pid, srv.AdminID, mr.branch, "master", mr.title)
		srv.SetMergeConflict(id, mr.conflict)
	}
	return pid
}
