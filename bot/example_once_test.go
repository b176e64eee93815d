package bot_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
)

func ExampleThread_Comment() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		log.Fatal(err)
	}
	b, err := bot.New(bot.Options{Client: c, Webhook: webhook.Options{Queue: webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})}})
	if err != nil {
		log.Fatal(err)
	}

	// "/label bug ui" adds the labels and replies. Run again for the same
	// comment, after a failure or a crash, neither call repeats its effect.
	b.Command("label", func(ctx context.Context, n *bot.Note, cmd bot.Command) error {
		if err := n.AddLabels(ctx, cmd.Args...); err != nil {
			return err
		}
		return n.Comment(ctx, "Labelled "+strings.Join(cmd.Args, ", ")+".")
	})

	// The bot behind a receiver of the fake server, until Settle says that
	// every delivery, and every event the bot's calls caused, is handled.
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	p, bob := srv.Seed.Project(srv.Admin, "app", collab.PublicVisibility), srv.Seed.User("bob")
	hook := srv.AddReceiver(p.ID)
	defer hook.Close()
	hook.Set(b)
	issue := srv.Seed.Issue(p, bob, "Crash")
	srv.Seed.IssueNote(issue, bob, "/label bug ui")
	if err := srv.Settle(ctx, b); err != nil {
		log.Fatal(err)
	}
	stop()
	if err := <-done; err != nil {
		log.Fatal(err)
	}

	notes, _, err := c.Notes.ListIssueNotes(context.Background(), p.ID, issue.ID, nil)
	if err != nil {
		log.Fatal(err)
	}
	text, marker, _ := strings.Cut(notes[len(notes)-1].Body, "\n\n")
	fmt.Println(text)
	fmt.Println(strings.HasPrefix(marker, "<!-- collab-once "))
	// Output:
	// Labelled bug, ui.
	// true
}
