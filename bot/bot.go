package bot

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// Options configure a Bot.
type Options struct {
	// Client is the bot's client; whoever it authenticates as is the bot.
	// Required.
	Client *collab.Client
	// Dir is the directory of the disk queue that keeps deliveries until
	// they are handled. Required unless Webhook.Queue is set: set that to a
	// webhook.MemoryQueue to give up durability (in tests, say).
	Dir string
	// CatchUp names the projects the bot serves. Run catches up on them
	// before handling live deliveries; with no projects it does not.
	CatchUp catchup.Options
	// ActAsUser makes each event's calls as the user who caused the event,
	// through Sudo. The client must be an administrator's.
	ActAsUser bool
	// IncludeOwnEvents hands the bot the events it caused itself too.
	IncludeOwnEvents bool
	// Webhook tunes the webhook handler underneath: Secret, Workers,
	// retries, Logger, Queue. Its callbacks must be nil: the bot sets them.
	Webhook webhook.Options
}

// Bot is a webhook receiver that routes events to the callbacks registered
// on it. Register callbacks, then call Run or ListenAndServe. It is an
// http.Handler for the server's deliveries.
type Bot struct {
	opts    Options
	handler *webhook.Handler
	queue   *diskqueue.Queue // opened by New, closed when Run returns

	started chan struct{} // closed once Run knows who the bot is and caught up
	ran     atomic.Bool   // Run, Serve or ListenAndServe was called

	mu       sync.RWMutex
	me       *collab.UserDetails
	issues   []route[*Issue, webhook.IssueAction]
	mrs      []route[*MergeRequest, webhook.MergeRequestAction]
	notes    []route[*Note, struct{}]
	builds   []route[*Build, collab.BuildStatus]
	pushes   []route[*Push, struct{}]
	commands map[string][]func(context.Context, *Note, Command) error
}

// errNoClient and the others report options New cannot work with.
var (
	errNoClient    = errors.New("bot: Options.Client is required")
	errNoQueue     = errors.New("bot: Options.Dir is required (or Options.Webhook.Queue)")
	errOwnCallback = errors.New("bot: the callbacks of Options.Webhook must be nil; register them on the Bot")
	errRanTwice    = errors.New("bot: Run, Serve or ListenAndServe may be called once")
)

// New makes a bot and opens its queue. It makes no request: Run asks who
// the bot is.
func New(opts Options) (*Bot, error) {
	w := opts.Webhook
	switch {
	case opts.Client == nil:
		return nil, errNoClient
	case w.OnDelivery != nil || w.OnPush != nil || w.OnTagPush != nil || w.OnIssue != nil || w.OnMergeRequest != nil ||
		w.OnNote != nil || w.OnBuild != nil || w.OnWikiPage != nil || w.OnRaw != nil:
		return nil, errOwnCallback
	case w.Queue == nil && opts.Dir == "":
		return nil, errNoQueue
	}
	b := &Bot{opts: opts, started: make(chan struct{}), commands: map[string][]func(context.Context, *Note, Command) error{}}
	if w.Queue == nil {
		q, err := diskqueue.Open(opts.Dir, diskqueue.Options{})
		if err != nil {
			return nil, err
		}
		b.queue, w.Queue = q, q
	}
	w.OnIssue, w.OnMergeRequest, w.OnNote = withMe(b, b.onIssue), withMe(b, b.onMergeRequest), withMe(b, b.onNote)
	w.OnBuild, w.OnPush = withMe(b, b.onBuild), withMe(b, b.onPush)
	h, err := webhook.NewHandler(w)
	if err != nil {
		b.closeQueue()
		return nil, err
	}
	b.handler = h
	return b, nil
}

// ServeHTTP stores a delivery, as webhook.Handler does.
func (b *Bot) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.handler.ServeHTTP(w, r) }

// Handler is the webhook handler underneath, for its Stats and dead
// letters.
func (b *Bot) Handler() *webhook.Handler { return b.handler }

// Me is the bot's own account, known once Run has started; nil before.
func (b *Bot) Me() *collab.UserDetails {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.me
}

// WaitIdle waits until Run has started and caught up, and every stored
// delivery is handled or dead-lettered. Meant for tests; see
// collabtest.Server.Settle.
func (b *Bot) WaitIdle(ctx context.Context) error {
	select {
	case <-b.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	return b.handler.WaitIdle(ctx)
}

// Run asks the server who the bot is, starts handling deliveries, catches
// up on the projects of Options.CatchUp, and blocks until ctx ends and the
// callbacks running then have finished (see webhook.Handler.Run). Serve the
// bot's deliveries yourself (it is an http.Handler), or use ListenAndServe,
// which also stops receiving in the order that loses nothing. Run closes
// the queue New opened. A failed catch-up is logged to
// Options.Webhook.Logger (slog.Default() when nil) and returned when Run
// ends; the bot keeps running.
func (b *Bot) Run(ctx context.Context) error {
	return b.run(ctx, b.handler.Run)
}

// Serve runs the bot as Run does and serves its deliveries on ln, through
// webhook.Serve, until ctx ends.
func (b *Bot) Serve(ctx context.Context, ln net.Listener) error {
	return b.run(ctx, func(ctx context.Context) error { return webhook.Serve(ctx, ln, b.handler) })
}

// ListenAndServe runs the bot as Run does and serves its deliveries on addr
// (":8080"), through webhook.ListenAndServe, until ctx ends.
func (b *Bot) ListenAndServe(ctx context.Context, addr string) error {
	return b.run(ctx, func(ctx context.Context) error { return webhook.ListenAndServe(ctx, addr, b.handler) })
}

// run learns who the bot is, then runs serve (which runs the handler's
// workers) and the catch-up beside it, and closes the queue once both end.
func (b *Bot) run(ctx context.Context, serve func(context.Context) error) error {
	if b.ran.Swap(true) {
		return errRanTwice
	}
	defer b.closeQueue()
	me, _, err := b.opts.Client.Users.Current(ctx)
	if err != nil {
		close(b.started) // nothing more is coming: WaitIdle need not wait
		return err
	}
	b.mu.Lock()
	b.me = me
	b.mu.Unlock()
	caughtUp := make(chan error, 1)
	go func() { caughtUp <- b.catchUp(ctx) }()
	err = serve(ctx)
	return errors.Join(err, <-caughtUp)
}

// catchUp admits what changed in the bot's projects while it was down; the
// workers handle it as they do deliveries.
func (b *Bot) catchUp(ctx context.Context) error {
	defer close(b.started)
	if len(b.opts.CatchUp.Projects) == 0 {
		return nil
	}
	_, err := catchup.Run(ctx, b.handler, b.opts.Client, b.opts.CatchUp)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil // stopped while catching up: the next start does it again
	}
	if err != nil {
		b.logger().ErrorContext(ctx, "bot: catch-up failed", "error", err)
	}
	return err
}

// logger is the webhook handler's logger: slog.Default() when none is set,
// so that a failure is never silent.
func (b *Bot) logger() *slog.Logger {
	if b.opts.Webhook.Logger != nil {
		return b.opts.Webhook.Logger
	}
	return slog.Default()
}

func (b *Bot) closeQueue() {
	if b.queue != nil {
		_ = b.queue.Close()
	}
}
