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
	alice := srv.AddUser("alice", false)
	bob := srv.AddUser("bob", false)
	acme := srv.AddGroup(alice.ID, "Acme", "acme", int(collab.InternalVisibility))
	srv.AddGroupMember(acme, bob.ID, int(collab.ReporterAccess))
	shop := srv.AddGroupProject(acme, alice.ID, "Webshop", int(collab.InternalVisibility))
	notes := srv.AddProject(alice.ID, "Notes", int(collab.PrivateVisibility))
	srv.AddBranch(shop, "feature/login", "")
	bug := srv.AddIssue(shop, bob.ID, "Checkout fails with an empty cart", "bug")
	srv.AddIssue(shop, alice.ID, "Add a login page", "feature")
	srv.AddIssue(notes, alice.ID, "Write the release notes")
	srv.AddNote(shop, "Issue", bug, alice.ID, "I can reproduce this.")
	srv.AddMergeRequest(shop, alice.ID, "feature/login", "master", "Add a login page")
	srv.AddBuild(shop, collabtest.BuildSpec{Ref: "master", Status: "success", Trace: "ok\n"})
	srv.AddBuild(shop, collabtest.BuildSpec{Ref: "feature/login", Status: "pending"})
	if err := srv.Err(); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded users alice (id %d, token %s) and bob (id %d, token %s), group acme,\n",
		alice.ID, alice.Token, bob.ID, bob.Token)
	fmt.Fprintf(out, "projects acme/webshop (id %d) and alice/notes (id %d) with issues, a note, a merge request and builds\n", shop, notes)
	return nil
}
