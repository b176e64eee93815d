package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest/cassette"
	"github.com/collabsvc/collab/webhook"
)

// eventLine is one delivery as collab hook listen prints it and collab hook
// replay reads it.
type eventLine struct {
	Kind       webhook.Kind    `json:"kind"`
	ReceivedAt time.Time       `json:"received_at"`
	Headers    http.Header     `json:"headers"`
	Body       json.RawMessage `json:"body"`
}

func newHookCmd(std stdio) *cobra.Command {
	return groupCmd(cmdText{use: "hook", short: "Manage a project's webhooks, receive them as JSON lines, and send them again"},
		newListenCmd(std), newReplayCmd(std))
}

// readSecret reads a hook's secret token from a file; "" when no file.
func readSecret(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	return readTokenFile("--secret-file", file)
}

// listenCmd holds the flags of collab hook listen.
type listenCmd struct {
	std        stdio
	addr       string
	secretFile string
	forwardTo  string
	queue      queueRef
}

func newListenCmd(std stdio) *cobra.Command {
	l := &listenCmd{std: std}
	cmd := leafCmd(cmdText{
		use:   "listen",
		short: "Receive webhooks and print each as one JSON line",
		long: `Receive the server's webhooks at --addr and print each verified delivery on standard
output as one JSON line: {"kind", "received_at", "headers", "body"}, where headers
never include the secret token and body is the delivery's JSON. A delivery is
answered 200 once it is stored, and done once its line is written.

With --secret-file, a delivery without that token is answered 401.
With --forward-to, each delivery is also sent on, with its body and headers (and
the secret token, when one is set), to a local URL; a failure is tried again later.
With --queue, deliveries are stored in a durable queue, on disk (a directory) or
in Redis (a redis://, rediss:// or unix:// URL, with --redis-prefix and
--redis-group): a listener that is stopped or killed prints, when started again
on the same queue, everything it had answered 200 and not yet printed. A line
may then be printed twice, never lost.

GET /healthz reports, as JSON, whether the listener can store deliveries and
whether it makes progress printing them (503 when not). A delivery that cannot
be stored, or that arrives while the listener stops, is closed without an
answer, so that the server sends it again.

It stops on SIGINT or SIGTERM.`,
		example: `  collab hook listen --addr :8080 --secret-file hook-secret | jq -r .body.object_attributes.title
  collab hook listen --addr 127.0.0.1:8080 --queue ~/.cache/hooks --forward-to http://127.0.0.1:3000/hook`,
	}, rangeArgs(0, 0), func(ctx context.Context, _ []string) error { return l.run(ctx) })
	f := cmd.Flags()
	f.StringVar(&l.addr, "addr", "127.0.0.1:8080", "`ADDRESS` to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&l.secretFile, "secret-file", "", "read the hook's secret token from `FILE`")
	f.StringVar(&l.forwardTo, "forward-to", "", "also send each delivery to `URL`")
	f.StringVar(&l.queue.target, "queue", "", "store deliveries in `QUEUE` ("+queueHelp+"), so that none is lost across a restart")
	l.queue.redisFlags(f)
	return cmd
}

func (l *listenCmd) run(ctx context.Context) error {
	secret, err := readSecret(l.secretFile)
	if err != nil {
		return err
	}
	if l.forwardTo != "" {
		if err := checkURL("--forward-to", l.forwardTo); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewTextHandler(l.std.err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var queue webhook.Queue
	if l.queue.target != "" {
		q, release, err := l.queue.open(ctx, logger, true, "")
		if err != nil {
			return err
		}
		defer release()
		queue = q
	}
	p := &linePrinter{w: bufio.NewWriter(l.std.out), forwardTo: l.forwardTo, secret: secret, hc: forwardClient()}
	h, err := webhook.NewHandler(webhook.Options{
		Secret:     secret,
		Queue:      queue,
		Workers:    1, // lines come out in the order the deliveries were stored
		OnDelivery: p.deliver,
		Logger:     logger,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return usagef("--addr: %v", err)
	}
	fmt.Fprintf(l.std.err, "collab: listening on http://%s (health at /healthz)\n", ln.Addr())
	// Serve stops admitting first, so that a delivery arriving during the
	// stop is asked for again; the queue closes after it returns.
	return webhook.Serve(ctx, ln, h)
}

// forwardClient sends deliveries on as the server does: within its wait,
// over the SDK's transport and its defaults.
func forwardClient() *http.Client {
	return &http.Client{Transport: collab.NewTransport(), Timeout: webhook.SenderTimeout}
}

// checkURL accepts an absolute http or https URL.
func checkURL(flag, raw string) error {
	req, err := http.NewRequest(http.MethodPost, raw, nil)
	if err != nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		return usagef("%s: want an http:// or https:// URL, not %q", flag, raw)
	}
	return nil
}

// linePrinter writes each delivery as one line, after forwarding it.
type linePrinter struct {
	mu        sync.Mutex
	w         *bufio.Writer
	buf       bytes.Buffer
	forwardTo string
	secret    string
	hc        *http.Client
}

func (p *linePrinter) deliver(ctx context.Context, d *webhook.Delivery) error {
	if p.forwardTo != "" {
		if err := relay(ctx, p.hc, p.forwardTo, d.Header, d.Body, p.secret); err != nil {
			return err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf.Reset()
	enc := json.NewEncoder(&p.buf)
	enc.SetEscapeHTML(false) // the body's strings stay as they came
	if err := enc.Encode(eventLine{Kind: d.Kind, ReceivedAt: d.ReceivedAt, Headers: d.Header, Body: d.Body}); err != nil {
		return err
	}
	if _, err := p.w.Write(p.buf.Bytes()); err != nil {
		return err
	}
	return p.w.Flush()
}

// hopHeaders are not relayed: they describe one connection, not the
// delivery.
var hopHeaders = []string{"Connection", "Content-Length", "Keep-Alive", "Proxy-Connection", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Accept-Encoding", webhook.HeaderToken}

// relay POSTs a delivery's body, byte for byte, with its headers to url,
// adding the secret token when there is one.
func relay(ctx context.Context, hc *http.Client, url string, header http.Header, body []byte, secret string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for _, k := range hopHeaders {
		req.Header.Del(k)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if secret != "" {
		req.Header.Set(webhook.HeaderToken, secret)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("POST %s: %s", req.URL.Redacted(), resp.Status)
	}
	return nil
}

// replayCmd holds the flags of collab hook replay.
type replayCmd struct {
	std        stdio
	to         string
	secretFile string
}

func newReplayCmd(std stdio) *cobra.Command {
	r := &replayCmd{std: std}
	cmd := leafCmd(cmdText{
		use:   "replay [FILE|-]",
		short: "Send deliveries printed by collab hook listen again",
		long: `Send each line printed by collab hook listen, from FILE or standard input, to --to as
the server sent it: the same body and headers, and the secret token from
--secret-file. It goes on after a failure, and exits 1 if any delivery failed.

FILE may also be a cassette written by collab record in front of a receiver: its
webhook deliveries are sent in the order they were recorded.`,
		example: `  collab hook replay events.jsonl --to http://127.0.0.1:3000/hook --secret-file hook-secret`,
	}, rangeArgs(0, 1), r.run)
	f := cmd.Flags()
	f.StringVar(&r.to, "to", "", "`URL` to send the deliveries to (required)")
	f.StringVar(&r.secretFile, "secret-file", "", "send the secret token read from `FILE`")
	return cmd
}

func (r *replayCmd) run(ctx context.Context, args []string) error {
	if r.to == "" {
		return usagef("--to is required")
	}
	if err := checkURL("--to", r.to); err != nil {
		return err
	}
	secret, err := readSecret(r.secretFile)
	if err != nil {
		return err
	}
	in := r.std.in
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return usagef("%v", err)
		}
		defer f.Close()
		in = f
	}
	hc := forwardClient()
	br := bufio.NewReader(in)
	// A cassette is indented JSON; a delivery line is JSON on one line.
	if start, _ := br.Peek(2); string(start) == "{\n" || string(start) == "{\r" {
		return r.replayCassette(ctx, br, hc, secret)
	}
	sent, failed := 0, 0
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			// Interrupted: stop here rather than fail every line left.
			fmt.Fprintf(r.std.err, "collab: replayed %d deliveries before stopping\n", sent)
			return err
		}
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var ev eventLine
			if jerr := json.Unmarshal(line, &ev); jerr != nil || len(ev.Body) == 0 {
				failed++
				fmt.Fprintf(r.std.err, "collab: line %d: not a delivery line\n", n)
			} else if rerr := relay(ctx, hc, r.to, ev.Headers, ev.Body, secret); rerr != nil {
				failed++
				fmt.Fprintf(r.std.err, "collab: line %d: %v\n", n, rerr)
			} else {
				sent++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(r.std.err, "collab: replayed %d deliveries\n", sent)
	if failed > 0 {
		return fmt.Errorf("%d deliveries failed", failed)
	}
	return nil
}

// replayCassette sends the webhook deliveries of the cassette in in.
func (r *replayCmd) replayCassette(ctx context.Context, in io.Reader, hc *http.Client, secret string) error {
	c, err := cassette.Read(in)
	if err != nil {
		return usagef("%v", err)
	}
	sent, failed := 0, 0
	for i, e := range c.Exchanges {
		if e.Kind != cassette.DeliveryKind {
			continue
		}
		if err := ctx.Err(); err != nil {
			fmt.Fprintf(r.std.err, "collab: replayed %d deliveries before stopping\n", sent)
			return err
		}
		if err := relay(ctx, hc, r.to, e.Request.Header, e.Request.Body(), secret); err != nil {
			failed++
			fmt.Fprintf(r.std.err, "collab: exchange %d: %v\n", i, err)
		} else {
			sent++
		}
	}
	fmt.Fprintf(r.std.err, "collab: replayed %d deliveries\n", sent)
	if failed > 0 {
		return fmt.Errorf("%d deliveries failed", failed)
	}
	return nil
}
