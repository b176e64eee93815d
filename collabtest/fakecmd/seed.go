package fakecmd

import (
	"fmt"
	"io"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// Seed fills srv with the small demo world of -seed and prints what it
// made: "collab conform --seed" measures a session recorded against
// "collab fake -seed" on a fake seeded the same way.
func Seed(srv *collabtest.Server, out io.Writer) error {
	alice, bob := srv.Seed.User("alice"), srv.Seed.User("bob")
	acme := srv.Seed.Group(alice, "Acme", "acme", collab.InternalVisibility)
	srv.Seed.GroupMember(acme, bob, collab.ReporterAccess)
	shop := srv.Seed.GroupProject(acme, alice, "Webshop", collab.InternalVisibility)
	notes := srv.Seed.Project(alice, "Notes", collab.PrivateVisibility)
	srv.Seed.Branch(shop, "feature/login")
	bug := srv.Seed.Issue(shop, bob, "Checkout fails with an empty cart", srv.Seed.Label(shop, "bug", "#d9534f"))
	srv.Seed.Issue(shop, alice, "Add a login page", srv.Seed.Label(shop, "feature", "#5cb85c"))
	srv.Seed.Issue(notes, alice, "Write the release notes")
	srv.Seed.IssueNote(bug, alice, "I can reproduce this.")
	srv.Seed.MergeRequest(shop, alice, "feature/login", "master", "Add a login page")
	srv.Seed.Build(shop, collabtest.BuildSpec{Ref: "master", Status: "success", Trace: "ok\n"})
	srv.Seed.Build(shop, collabtest.BuildSpec{Ref: "feature/login", Status: "pending"})
	if err := srv.Err(); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded users alice (id %d, token %s) and bob (id %d, token %s), group acme,\n",
		alice.ID, alice.Token, bob.ID, bob.Token)
	fmt.Fprintf(out, "projects acme/webshop (id %d) and alice/notes (id %d) with issues, a note, a merge request and builds\n", shop.ID, notes.ID)
	return nil
}
