package collab_test

import (
	"context"
	"fmt"
	"log"

	"github.com/collabsvc/collab"
)

func ExampleNotesService_CreateIssueNoteOnce() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()
	issue := srv.Seed.Issue(project, srv.Admin, "Deploy 42 failed").ID

	// A job that may run again reports once: the key names the effect on
	// every attempt, and only the first attempt is fresh.
	for attempt := 1; attempt <= 3; attempt++ {
		once := collab.Once{Key: "deploy-42/report", Fresh: attempt == 1}
		_, resp, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, once, &collab.CreateNoteOptions{Body: "Rolled back."})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(attempt, resp.StatusCode)
	}
	notes, _, err := c.Notes.ListIssueNotes(ctx, pid, issue, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(notes), "comment")
	// Output:
	// 1 201
	// 2 200
	// 3 200
	// 1 comment
}

func ExampleIssuesService_CreateOnce() {
	c, srv, project := newExampleClient()
	pid := project.ID
	defer srv.Close()
	ctx := context.Background()

	once := collab.Once{Key: "nightly/2026-11-27"} // not Fresh: look first
	opt := &collab.CreateIssueOptions{Title: "Nightly build failed"}
	first, _, err := c.Issues.CreateOnce(ctx, pid, once, opt)
	if err != nil {
		log.Fatal(err)
	}
	again, _, err := c.Issues.CreateOnce(ctx, pid, once, opt)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.ID == again.ID)
	// Output: true
}
