// Command slash-bot adds the labels of "/label bug ui" in a comment and
// replies. Deliveries wait in BOT_DIR; the webhook is served on :8080.
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c, err := collab.NewClient(os.Getenv("COLLAB_URL"), collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil { // go test ./examples/slash-bot runs the bot on the fake server
		log.Print("slash-bot needs COLLAB_URL, COLLAB_TOKEN and BOT_DIR: ", err)
		return
	}
	b, err := bot.New(bot.Options{Client: c, Dir: os.Getenv("BOT_DIR")})
	if err == nil {
		b.Command("label", label)
		err = b.ListenAndServe(ctx, ":8080")
	}
	if err != nil {
		log.Fatal(err)
	}
}

// label adds the labels and replies, each once however often it runs.
func label(ctx context.Context, n *bot.Note, cmd bot.Command) error {
	if err := n.AddLabels(ctx, cmd.Args...); err != nil {
		return err
	}
	return n.Comment(ctx, "Labelled "+strings.Join(cmd.Args, ", ")+".")
}
