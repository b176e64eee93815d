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
// AddLabels, RemoveLabels, Close, Reopen).
//
// Several callbacks may match one event. They run one after the other: for
// an issue, a merge request, a build or a push, the matching ones in the
// order they were registered; for a comment, every OnNote callback in the
// order they were registered, and then the comment's commands in the order
// they are written in it, each command's callbacks in the order they were
// registered. The first error stops the rest. A delivery counts as handled
// when every one of them returns nil. When one fails, the delivery is tried
// again later and every callback runs again.
//
// # Effects once
//
// Deliveries are handled at least once, so a callback may run again after
// a failure, a crash or a restart. The calls of a Thread make their effect
// once all the same. Comment puts an invisible marker in the comment, an
// HTML comment derived from the delivery, the bot, and the number of
// comments posted before it in the handling; a later attempt of the delivery reads
// the thread's comments and posts only when the marker is not there.
// AddLabels and RemoveLabels read the labels and write only what is
// missing. Close and Reopen read the state on a later attempt, and write
// only when it differs. The first attempt of a delivery costs no request
// more than the plain calls. What remains: a marker edited out of a
// comment, a label removed or a state changed by someone between two
// attempts (the later attempt does it again), and a callback that posts
// its comments in another order on the next attempt.
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
