package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

func Example() {
	handled := make(chan string, 1)
	h, err := webhook.NewHandler(webhook.Options{
		Secret: "hook-secret",
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			a := e.ObjectAttributes
			handled <- fmt.Sprintf("%s #%d %q by %s at %s", a.Action, a.IID, a.Title, e.User.Username, a.CreatedAt.UTC().Format("15:04"))
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	// In production: webhook.ListenAndServe(ctx, ":8080", h), with ctx
	// ended by SIGTERM (signal.NotifyContext).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- webhook.Serve(ctx, ln, h) }()

	// What the server sends when issue #58 is opened (most keys left out).
	body := `{"object_kind":"issue","user":{"name":"Priya Raman","username":"praman","avatar_url":null},
	  "object_attributes":{"id":4417,"iid":58,"title":"ETA off by one minute","state":"opened",
	  "created_at":"2016-06-21 09:14:07 UTC","updated_at":"2016-06-21 09:14:07 UTC","action":"open"}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/hook", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", "Issue Hook")
	req.Header.Set("X-Gitlab-Token", "hook-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("answered", resp.StatusCode)

	fmt.Println(<-handled)
	stop() // stops admitting, then the workers, then the server
	fmt.Println("stopped:", <-done)
	st := h.Stats()
	fmt.Println("accepted", st.Accepted, "handled", st.Handled, "asked again", st.AskedAgain)
	// Output:
	// answered 200
	// open #58 "ETA off by one minute" by praman at 09:14
	// stopped: <nil>
	// accepted 1 handled 1 asked again 0
}

// A receiver that keeps what it answered across crashes and restarts: the
// queue lives in a directory, and a failing callback is retried.
func Example_durable() {
	dir, err := os.MkdirTemp("", "hooks") // in production: a directory of its own, such as /var/lib/mybot/queue
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	q, err := diskqueue.Open(dir, diskqueue.Options{})
	if err != nil {
		panic(err) // a damaged or locked queue is an error, never a silent reset
	}
	defer q.Close()

	h, err := webhook.NewHandler(webhook.Options{
		Queue:    q,
		RetryMin: time.Millisecond, // in production the defaults: 1 s doubling up to 5 min
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			d := webhook.DeliveryFrom(ctx)
			fmt.Printf("attempt %d of %s\n", d.Attempt, d.StateKey)
			if d.Attempt == 1 {
				return errors.New("the issue tracker is down") // retried later
			}
			return nil
		},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"object_kind":"issue","object_attributes":{"id":4417,"iid":58,"updated_at":"2016-06-21 09:14:07 UTC","action":"open"}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", "Issue Hook")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("answered", resp.StatusCode, "once stored")

	// The workers start after the answer here, to show that the delivery
	// was kept; a receiver normally runs them from the start.
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()

	if err := h.WaitIdle(context.Background()); err != nil {
		panic(err)
	}
	stop()
	fmt.Println("stopped:", <-done)
	st := h.Stats()
	fmt.Println("handled", st.Handled, "retried", st.Retried)
	// Output:
	// answered 200 once stored
	// attempt 1 of issue/4417/2016-06-21T09:14:07Z
	// attempt 2 of issue/4417/2016-06-21T09:14:07Z
	// stopped: <nil>
	// handled 1 retried 1
}
