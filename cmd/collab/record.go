package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab/collabtest/cassette"
)

// recordCmd holds the flags of collab record.
type recordCmd struct {
	std      stdio
	upstream string
	out      string
	addr     string
}

func newRecordCmd(std stdio) *cobra.Command {
	r := &recordCmd{std: std}
	cmd := leafCmd(cmdText{
		use:   "record --upstream URL -o FILE",
		short: "Record a session with a server, through a proxy, into a cassette",
		long: `Serve a reverse proxy to --upstream and record every exchange that passes through it
into the cassette FILE, which collab fake --replay, collab conform and the Go
package collabtest/cassette read.
The first line of output is the proxy's base URL: point a client, or the server's
webhooks, at it.

Secrets are never written: the values of the credential headers (PRIVATE-TOKEN,
Authorization, SUDO, BUILD-TOKEN, JOB-TOKEN, Cookie) and of X-Gitlab-Token, and of
private_token, access_token, token, runners_token, password and the other token
keys of the SDK's records in queries, forms and JSON bodies (requests and answers),
become placeholders such as <secret-1>, the same one for the same secret; so does
each of those credentials wherever later text repeats it (a build token inside a
clone URL). docs/record-replay.md lists every rule.

Placed in front of a webhook receiver (--upstream the receiver's URL), it records
the deliveries the server sends; collab hook replay plays them back.

On SIGINT or SIGTERM it writes the cassette and exits 0.`,
		example: `  collab record --upstream https://collab.example.com -o session.json
  COLLAB_URL=http://127.0.0.1:PORT collab api projects
  collab record --upstream http://127.0.0.1:3000/hook -o hooks.json --addr 127.0.0.1:8090`,
	}, rangeArgs(0, 0), func(ctx context.Context, _ []string) error { return r.run(ctx) })
	f := cmd.Flags()
	f.StringVar(&r.upstream, "upstream", "", "base `URL` of the server (or webhook receiver) to record (required)")
	f.StringVarP(&r.out, "output", "o", "", "write the cassette to `FILE` (required)")
	f.StringVar(&r.addr, "addr", "127.0.0.1:0", "`ADDRESS` to listen on (host:port; port 0 picks a free one)")
	return cmd
}

func (r *recordCmd) run(ctx context.Context) error {
	if r.upstream == "" || r.out == "" {
		return usagef("--upstream and -o are required")
	}
	if err := checkURL("--upstream", r.upstream); err != nil {
		return err
	}
	rec := cassette.NewRecorder()
	proxy, err := rec.Handler(r.upstream)
	if err != nil {
		return usagef("--upstream: %v", err)
	}
	// An empty cassette first: a path that cannot be written fails now,
	// not after the session.
	if err := rec.Cassette().WriteFile(r.out); err != nil {
		return usagef("-o: %v", err)
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return usagef("--addr: %v", err)
	}
	fmt.Fprintf(r.std.out, "http://%s\n", ln.Addr())
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: time.Minute}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		// Requests in flight finish and are recorded before the write.
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(stopCtx)
		cancel()
	}
	c := rec.Cassette()
	if werr := c.WriteFile(r.out); werr != nil {
		return werr
	}
	fmt.Fprintf(r.std.err, "collab: recorded %d exchanges in %s\n", len(c.Exchanges), r.out)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
