package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
	"github.com/collabsvc/collab/collabtest/fakecmd"
)

// conformCmd holds the flags of collab conform.
type conformCmd struct {
	std    stdio
	cfg    *config
	target string
	seed   bool
}

func newConformCmd(cfg *config, std stdio) *cobra.Command {
	c := &conformCmd{std: std, cfg: cfg}
	cmd := leafCmd(cmdText{
		use:   "conform FILE [--target URL]",
		short: "Send a recorded session's requests again and report where the answers differ",
		long: `Send the requests of the cassette FILE (made by collab record), in order, to a fresh
in-memory fake, or to --target with the token of COLLAB_TOKEN (or --token-file),
and print, per route, where each answer differs from the recorded one: the status,
the Content-Type, Link and X-Total* headers, and the body by JSON pointer.

With --seed the fresh fake holds what collab fake -seed makes (users, a group,
projects, issues, a merge request, builds), so that a session recorded against
collab fake -seed finds the same world.

Run on a session recorded from a deployed server, it measures how far the fake is
from that server. Ids match any id, RFC 3339 times any time, long hex runs any hex
run, and secrets any secret: the rules are those of cassette.Conform.

It exits 0 when no answer differs, and 1 otherwise.`,
		example: `  collab conform session.json
  collab conform --seed session-against-a-seeded-fake.json
  COLLAB_TOKEN=... collab conform session.json --target https://staging.example.com`,
	}, oneFile, func(ctx context.Context, args []string) error { return c.run(ctx, args[0]) })
	cmd.Flags().StringVar(&c.target, "target", "", "base `URL` of the server to measure (default: a fresh fake)")
	cmd.Flags().BoolVar(&c.seed, "seed", false, "seed the fresh fake as collab fake -seed does")
	return cmd
}

func (c *conformCmd) run(ctx context.Context, file string) error {
	cas, err := cassette.Load(file)
	if err != nil {
		return usagef("%v", err)
	}
	target, opts, done, err := c.targetServer()
	if err != nil {
		return err
	}
	defer done()
	diffs, err := cassette.Conform(ctx, cas, target, opts)
	c.report(cas, diffs)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%d differences", len(diffs))
	}
	return nil
}

// targetServer returns the server to measure and how to call it, and what
// stops it: --target, or a fresh fake.
func (c *conformCmd) targetServer() (string, cassette.ConformOptions, func(), error) {
	if c.target == "" {
		srv, err := collabtest.NewServer()
		if err != nil {
			return "", cassette.ConformOptions{}, nil, err
		}
		if c.seed {
			if err := fakecmd.Seed(srv, io.Discard); err != nil {
				srv.Close()
				return "", cassette.ConformOptions{}, nil, err
			}
		}
		return srv.URL, cassette.ConformOptions{Token: srv.AdminToken}, srv.Close, nil
	}
	if c.seed {
		return "", cassette.ConformOptions{}, nil, usagef("--seed seeds the fresh fake, and cannot be used with --target")
	}
	if err := checkURL("--target", c.target); err != nil {
		return "", cassette.ConformOptions{}, nil, err
	}
	token, kind, err := c.cfg.token()
	if err != nil {
		return "", cassette.ConformOptions{}, nil, err
	}
	return c.target, cassette.ConformOptions{Token: token, OAuth: kind == "oauth"}, func() {}, nil
}

// report prints the differences grouped by route, then a summary line.
func (c *conformCmd) report(cas *cassette.Cassette, diffs []cassette.Difference) {
	routes, sent := map[string]bool{}, 0
	for _, e := range cas.Exchanges {
		if e.Kind == "" {
			routes[e.Route] = true
			sent++
		}
	}
	var order []string
	byRoute := map[string][]cassette.Difference{}
	for _, d := range diffs {
		if byRoute[d.Route] == nil {
			order = append(order, d.Route)
		}
		byRoute[d.Route] = append(byRoute[d.Route], d)
	}
	for _, r := range order {
		fmt.Fprintf(c.std.out, "%s: %d differences\n", r, len(byRoute[r]))
		for _, d := range byRoute[r] {
			fmt.Fprintf(c.std.out, "  #%d %s: recorded %s, got %s\n", d.Exchange, d.Part, d.Recorded, d.Got)
		}
	}
	target := c.target
	switch {
	case target == "" && c.seed:
		target = "the seeded fake"
	case target == "":
		target = "the fake"
	}
	fmt.Fprintf(c.std.out, "%d exchanges on %d routes against %s: %d differences on %d routes\n",
		sent, len(routes), target, len(diffs), len(order))
	if skipped := len(cas.Exchanges) - sent; skipped > 0 {
		fmt.Fprintf(c.std.out, "%d webhook deliveries skipped: the server sends them, it is not asked for them\n", skipped)
	}
}

// oneFile accepts exactly one argument, the cassette.
func oneFile(_ *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("want one argument, the cassette FILE; got %d", len(args))
	}
	return nil
}
