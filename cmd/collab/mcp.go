package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/mcptools"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
	"github.com/collabsvc/collab/redis/redislimit"
)

// mcpFlags are collab mcp's flags.
type mcpFlags struct {
	http        string
	sel         mcptools.Selection
	trusted     string
	hide        bool
	rate        float64
	sharedLimit string
}

func newMCPCmd(cfg *config, std stdio) *cobra.Command {
	var f mcpFlags
	cmd := leafCmd(cmdText{
		use:   "mcp",
		short: "Serve the typed commands as tools to an AI agent (Model Context Protocol)",
		long: "collab mcp serves the operations of the typed commands as MCP tools, over stdio\n" +
			"(the default) or, with --http, over streamable HTTP on loopback, where a client\n" +
			"must send the same token as a bearer token. It calls the server as the token's\n" +
			"user: give it a token with no more rights than the agent needs, and --read-only\n" +
			"to serve no tool that writes, whatever the other flags say. See docs/mcp.md.",
		example: "  collab mcp\n  collab mcp --toolsets issue,mr --read-only\n  collab mcp --http 127.0.0.1:8765 --trusted-authors developer",
	}, rangeArgs(0, 0), func(ctx context.Context, _ []string) error { return runMCP(ctx, cfg, &f, std) })
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "", "serve streamable HTTP on the loopback `ADDR` instead of stdio")
	fl.StringSliceVar(&f.sel.Toolsets, "toolsets", nil, "serve these `TOOLSETS` (nouns, all, default)")
	fl.StringSliceVar(&f.sel.Tools, "tools", nil, "serve these `TOOLS` too")
	fl.StringSliceVar(&f.sel.Exclude, "exclude-tools", nil, "do not serve these `TOOLS`")
	fl.BoolVar(&f.sel.ReadOnly, "read-only", false, "serve no tool that writes; no other flag lifts this")
	fl.StringVar(&f.trusted, "trusted-authors", "", "mark text by authors below `LEVEL` (guest, reporter, developer, master, owner) in the project")
	fl.BoolVar(&f.hide, "hide-untrusted", false, "with --trusted-authors, hide such text instead of marking it")
	fl.Float64Var(&f.rate, "rate", 10, "at most `N` requests a second to the server, over every tool call")
	fl.StringVar(&f.sharedLimit, "shared-limit", "", "share the --rate budget with other processes through Redis at `URL` (redis://…)")
	return cmd
}

func runMCP(ctx context.Context, cfg *config, f *mcpFlags, std stdio) error {
	srv, token, err := newMCPServer(ctx, cfg, f)
	if err != nil {
		return err
	}
	if f.http == "" {
		return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(std.in), Writer: writeCloser{std.out}})
	}
	if token == "" {
		return usagef("--http needs a token (COLLAB_TOKEN or --token-file): clients must send it as a bearer token")
	}
	l, err := mcptools.ListenLoopback(f.http)
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(std.err, "collab mcp: serving http://%s\n", l.Addr())
	hs := &http.Server{Handler: mcptools.HTTPHandler(srv, token), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newMCPServer builds the server f describes, with its client, and returns
// the client's token.
func newMCPServer(ctx context.Context, cfg *config, f *mcpFlags) (*mcp.Server, string, error) {
	specs, err := f.sel.Select(mcptools.FromOps(ops.All()))
	if err != nil {
		return nil, "", usageError{err}
	}
	if !(f.rate > 0) {
		return nil, "", usagef("--rate must be above 0")
	}
	token, _, err := cfg.token()
	if err != nil {
		return nil, "", err
	}
	limit := collab.WithRateLimit(f.rate, 1)
	if f.sharedLimit != "" {
		if limit, err = sharedLimit(ctx, f.sharedLimit, token, f.rate); err != nil {
			return nil, "", err
		}
	}
	c, token, err := cfg.client("api/v3", mcptools.HTTPClient(nil), limit)
	if err != nil {
		return nil, "", err
	}
	o := mcptools.Options{Client: c, Token: token, Version: moduleVersion()}
	if f.trusted != "" {
		level, err := accessLevel(f.trusted)
		if err != nil {
			return nil, "", err
		}
		o.Trust = &mcptools.Trust{Client: c, Level: level, Hide: f.hide}
	}
	srv, err := mcptools.NewServer(specs, o)
	return srv, token, err
}

// sharedLimit is the option of a budget of rate requests a second that
// every process with the same token shares in the Redis at rawURL.
func sharedLimit(ctx context.Context, rawURL, token string, rate float64) (collab.ClientOption, error) {
	if token == "" {
		return nil, usagef("--shared-limit needs a token: the budget is the token's")
	}
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, usagef("--shared-limit: %v", err)
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("--shared-limit: %w", err)
	}
	lim, err := redislimit.New(rdb, token, redislimit.Options{Rate: rate})
	if err != nil {
		return nil, err
	}
	return collab.WithSharedLimiter(lim), nil
}

// accessLevel reads a level by its name.
func accessLevel(name string) (collab.AccessLevel, error) {
	for l := collab.GuestAccess; l <= collab.OwnerAccess; l += 10 {
		if strings.EqualFold(l.String(), name) {
			return l, nil
		}
	}
	return 0, usagef("--trusted-authors: %q is not guest, reporter, developer, master or owner", name)
}

// writeCloser lets the SDK close its side of stdout without closing the
// process's.
type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
