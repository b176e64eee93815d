// Command slash-bot labels new crash reports "bug" with a comment, and
// closes an issue when someone comments "/close" on it. It keeps deliveries
// in BOT_DIR and catches up on COLLAB_PROJECT when it starts. Register
// http://<host>:8080/ as the project's webhook (issues and comments).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if os.Getenv("COLLAB_URL") == "" { // the test runs the bot on the embedded fake
		fmt.Println("slash-bot needs a server: set COLLAB_URL, COLLAB_TOKEN, COLLAB_PROJECT and BOT_DIR, or run go test ./examples/slash-bot")
		return
	}
	c, err := collab.NewClient(os.Getenv("COLLAB_URL"), collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	b, err := newBot(c, os.Getenv("BOT_DIR"), catchup.Path(os.Getenv("COLLAB_PROJECT")))
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(b.ListenAndServe(ctx, ":8080"))
}

// newBot builds the bot: its queue in dir, catching up on project.
func newBot(c *collab.Client, dir string, project catchup.Project) (*bot.Bot, error) {
	b, err := bot.New(bot.Options{Client: c, Dir: dir, CatchUp: catchup.Options{Projects: []catchup.Project{project}}})
	if err != nil {
		return nil, err
	}
	b.OnIssue(func(ctx context.Context, is *bot.Issue) error {
		if !strings.Contains(strings.ToLower(is.Event.ObjectAttributes.Title), "crash") {
			return nil
		}
		if err := is.AddLabels(ctx, "bug"); err != nil {
			return err
		}
		return is.Comment(ctx, "Thanks, triaging")
	}, webhook.IssueOpen)
	b.Command("close", func(ctx context.Context, n *bot.Note, _ bot.Command) error { return n.Close(ctx) })
	return b, nil
}
