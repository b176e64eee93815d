// Package fakecmd is the fake server as a command: it serves the collabtest
// fake Collaboration Service on an address for scripts, clients in other
// languages and manual tries. Both cmd/collabfake and "collab fake" run it
// through Main, so that they take the same flags and print the same banner.
package fakecmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
)

// tokenEnv names the environment variable that sets the admin token when
// --token is not given.
const tokenEnv = "COLLABFAKE_TOKEN"

// options are the parsed flags.
type options struct {
	addr  string
	token string
	log   bool
	seed  bool
	// replay is a cassette to answer from instead of the model.
	replay string
	// webhookTimeout is how long a webhook delivery waits (0: the default).
	webhookTimeout time.Duration
}

// DefaultAddr is where the fake listens without --addr. It is not 8080, so
// a webhook receiver on the usual port can run beside it.
const DefaultAddr = "127.0.0.1:8081"

// handlerInstalled, when set by a test, runs right after the signal
// handler is installed, to send a signal before anything else happens.
var handlerInstalled func()

// Main runs the command called name ("collabfake" or "collab fake") with
// args (without the program name), writing its URL, token and messages to
// stdout and usage, errors and the request log to stderr. It serves until
// ctx ends or SIGINT or SIGTERM arrives, and returns the exit status: 0
// after a clean stop or --help, 1 when the server cannot start, 2 on bad flags.
//
// A caller that installs its own signal handler first passes the context
// it cancels, so that a signal caught before Main starts is not lost.
func Main(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	// The handler goes in first: a signal sent while the flags are read or
	// the listener opens would otherwise kill the process uncleanly.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if handlerInstalled != nil {
		handlerInstalled()
	}
	opts, err := parseFlags(name, args, stderr)
	if err == flag.ErrHelp {
		return 0
	}
	if err != nil {
		return 2
	}
	if err := serve(ctx, name, opts, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// parseFlags reads the command line, each flag spelled with one dash or
// two; -h prints the usage to errOut.
func parseFlags(name string, args []string, errOut io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.StringVar(&o.addr, "addr", DefaultAddr, "`address` to listen on (host:port; port 0 picks a free one)")
	fs.StringVar(&o.token, "token", "",
		"fixed private `token` of the administrator \"root\" (default: $"+tokenEnv+", else a random one)")
	fs.BoolVar(&o.log, "log", false, "log one line per request to stderr: method, path without the query, status, user (never a token)")
	fs.BoolVar(&o.seed, "seed", false, "start with a demo world: users alice and bob, group acme, projects acme/webshop and alice/notes,\nissues, a note, a merge request and builds")
	fs.StringVar(&o.replay, "replay", "", "answer every request from the recorded session in cassette `FILE` (made by collab record)\n"+
		"instead of the model; requests that match nothing are answered 501 with the closest recorded one")
	fs.DurationVar(&o.webhookTimeout, "webhook-timeout", 0, "how long a webhook delivery waits to connect, then for the answer,\n"+
		"before it sends the same body again (0: 10s, as deployed servers)")
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: %[1]s [flags]\n\n"+
			"%[1]s serves a fake Collaboration Service (/api/v3 and the runner API /ci/api/v1)\n"+
			"in memory until SIGINT or SIGTERM. It reads query, form, multipart and JSON bodies.\n"+
			"Project hooks registered through the API receive webhooks; --log also logs each delivery.\n\nFlags:\n", name)
		printFlags(fs, errOut)
	}
	err := fs.Parse(args)
	if o.token == "" {
		o.token = os.Getenv(tokenEnv)
	}
	if err == nil && (o.seed || o.log) && o.replay != "" {
		err = errors.New("--seed and --log cannot be used with --replay: a replay serves only what was recorded, and does not log")
		fmt.Fprintf(errOut, "%s: %v\n", name, err)
		fs.Usage()
	}
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments: %q", fs.Args())
		fmt.Fprintf(errOut, "%s: %v\n", name, err)
		fs.Usage()
	}
	return o, err
}

// printFlags lists the flags as every other collab command spells them,
// with two dashes; the flag package reads both spellings, so the single
// dash of earlier versions keeps working.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		fmt.Fprintf(w, "%s\n    \t%s", line, usage)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0s" {
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// serve runs the fake until ctx ends, printing its URL and admin token to
// out and, with -log, the request log to logOut.
func serve(ctx context.Context, name string, o options, out, logOut io.Writer) error {
	opts := []collabtest.Option{collabtest.WithAddr(o.addr), collabtest.WithAdminToken(o.token)}
	if o.log {
		opts = append(opts, collabtest.WithLog(slog.New(slog.NewTextHandler(logOut, nil))))
	}
	var replay *cassette.Replayer
	if o.replay != "" {
		c, err := cassette.Load(o.replay)
		if err != nil {
			return err
		}
		replay = cassette.NewReplayer(c)
		opts = append(opts, collabtest.WithReplay(replay))
	}
	srv, err := collabtest.NewServer(opts...)
	if err != nil {
		return err
	}
	defer srv.Close()
	srv.SetWebhookTimeout(o.webhookTimeout)
	if o.seed {
		if err := Seed(srv, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "%s serving %s/api/v3\nadmin private token: %s\n", name, srv.URL, srv.AdminToken)
	<-ctx.Done()
	srv.Close()
	if replay != nil {
		if err := replay.Verify(); err != nil {
			fmt.Fprintf(logOut, "%s: %v\n", name, err)
		}
	}
	fmt.Fprintln(out, name, "stopped")
	return nil
}
