// Command collabfake serves the collabtest fake Collaboration Service on an
// address, for scripts, clients in other languages and manual tries.
//
//	go run ./cmd/collabfake -addr 127.0.0.1:8080 -token secret -seed -log
//
// It prints its base URL and the administrator's token, serves until
// SIGINT or SIGTERM, then stops cleanly with exit status 0. Run it with -h
// for every flag.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/collabsvc/collab/collabtest"
)

// tokenEnv names the environment variable that sets the admin token when
// -token is not given.
const tokenEnv = "COLLABFAKE_TOKEN"

// options are the parsed flags.
type options struct {
	addr  string
	token string
	log   bool
	seed  bool
	// webhookTimeout is how long a webhook delivery waits (0: the default).
	webhookTimeout time.Duration
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		return
	}
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "collabfake:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line; -h prints the usage to errOut.
func parseFlags(args []string, errOut io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("collabfake", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&o.token, "token", "",
		"fixed private `token` of the administrator \"root\" (default: $"+tokenEnv+", else a random one)")
	fs.BoolVar(&o.log, "log", false, "log one line per request to stderr: method, path without the query, status, user (never a token)")
	fs.BoolVar(&o.seed, "seed", false, "start with a demo world: users alice and bob, group acme, projects acme/webshop and alice/notes,\nissues, a note, a merge request and builds")
	fs.DurationVar(&o.webhookTimeout, "webhook-timeout", 0, "how long a webhook delivery waits to connect, then for the answer,\n"+
		"before it sends the same body again (0: 10s, as deployed servers)")
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: collabfake [flags]\n\n"+
			"collabfake serves a fake Collaboration Service (/api/v3 and the runner API /ci/api/v1)\n"+
			"in memory until SIGINT or SIGTERM. It reads query, form, multipart and JSON bodies.\n"+
			"Project hooks registered through the API receive webhooks; -log also logs each delivery.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	if o.token == "" {
		o.token = os.Getenv(tokenEnv)
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %q", fs.Args())
		fmt.Fprintln(errOut, "collabfake:", err)
		fs.Usage()
	}
	return o, err
}

// serve runs the fake until ctx ends, printing its URL and admin token to
// out and, with -log, the request log to logOut.
func serve(ctx context.Context, o options, out, logOut io.Writer) error {
	cfg := collabtest.Config{Addr: o.addr, AdminToken: o.token}
	if o.log {
		cfg.Log = slog.New(slog.NewTextHandler(logOut, nil))
	}
	srv, err := collabtest.Start(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.SetWebhookTimeout(o.webhookTimeout)
	if o.seed {
		if err := seed(srv, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "collabfake serving %s/api/v3\nadmin private token: %s\n", srv.URL, srv.AdminToken)
	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(out, "collabfake stopped")
	return nil
}
