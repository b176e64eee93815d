// Package bot builds bots on the server's webhooks: it routes events by kind
// and action, runs slash commands written in comments, ignores the events
// the bot's own calls cause, and keeps every delivery on disk until its
// callback succeeds.
//
// A bot that labels new crash reports and closes an issue on "/close":
//
//	b, err := bot.New(bot.Options{Client: c, Dir: "/var/lib/triage",
//		CatchUp: catchup.Options{Projects: []catchup.Project{catchup.Path("group/app")}}})
//	b.OnIssue(func(ctx context.Context, is *bot.Issue) error {
//		if !strings.Contains(is.Event.ObjectAttributes.Title, "crash") {
//			return nil
//		}
//		return is.AddLabels(ctx, "bug")
//	}, webhook.IssueOpen)
//	b.Command("close", func(ctx context.Context, n *bot.Note, _ bot.Command) error {
//		return n.Close(ctx)
//	})
//	err = b.ListenAndServe(ctx, ":8080")
//
// # Callbacks
//
// Each callback gets the context the webhook handler gives (it carries the
// delivery, see webhook.DeliveryFrom, and any tracing span), and a value for
// the event: the event itself, the project, a client, and for issues, merge
// requests and their comments the calls a bot makes on them (Comment,
// AddLabels, RemoveLabels, Close, Reopen). Several callbacks may match one
// event; they run in the order they were registered. A delivery counts as
// handled when every one of them returns nil. When one fails, the delivery
// is tried again later and every callback runs again: write callbacks that
// can run twice (AddLabels and Close can).
//
// # Who the bot is
//
// Run asks the server who the client is (Users.Current) and from then on
// ignores the events that user caused: its own comments, label changes and
// state changes, so that a bot never answers itself. Options.IncludeOwnEvents
// turns that off. With Options.ActAsUser, an administrator's bot makes its
// calls as the user who caused the event, through Sudo; the events those
// calls cause are then that user's, and reach the bot again.
//
// # Durable
//
// Deliveries are kept in a disk queue in Options.Dir until their callbacks
// succeed, across crashes and restarts, and on start the bot catches up on
// what changed in its projects while it was down (Options.CatchUp), through
// the same callbacks. Events seen both ways are handled once.
package bot
