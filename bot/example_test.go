package bot_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
	"github.com/collabsvc/collab/webhook"
)

func ExampleBot_Command() {
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken("token"))
	if err != nil {
		panic(err)
	}
	b, err := bot.New(bot.Options{Client: c, Webhook: webhook.Options{Queue: webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})}})
	if err != nil {
		panic(err)
	}
	// "/label bug ui" adds both labels to the issue or merge request.
	b.Command("label", func(ctx context.Context, n *bot.Note, cmd bot.Command) error {
		return n.AddLabels(ctx, cmd.Args...)
	})
	fmt.Println(len(bot.ParseCommands("Thanks!\n/label bug \"needs review\"\n```\n/close\n```")))
	// Output: 1
}

func ExampleBot_OnIssue() {
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken("token"))
	if err != nil {
		panic(err)
	}
	b, err := bot.New(bot.Options{Client: c, Webhook: webhook.Options{Queue: webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})}})
	if err != nil {
		panic(err)
	}
	// Several actions per registration; none would mean every action.
	b.OnIssue(func(ctx context.Context, is *bot.Issue) error {
		if strings.Contains(is.Event.ObjectAttributes.Title, "crash") {
			return is.AddLabels(ctx, "bug")
		}
		return nil
	}, webhook.IssueOpen, webhook.IssueReopen)
}

func ExampleParseCommands() {
	for _, cmd := range bot.ParseCommands("/label bug 'needs review'\n    /close (indented: code)\n/assign @bob") {
		fmt.Println(cmd.Line, cmd.Name, cmd.Args)
	}
	// Output:
	// 1 label [bug needs review]
	// 3 assign [@bob]
}
