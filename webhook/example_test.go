package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/collabsvc/collab/webhook"
)

func Example() {
	ctx, stop := context.WithCancel(context.Background())
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
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	srv := httptest.NewServer(h) // in production: http.ListenAndServe(addr, h)
	defer srv.Close()

	// What the server sends when issue #58 is opened (most keys left out).
	body := `{"object_kind":"issue","user":{"name":"Priya Raman","username":"praman","avatar_url":null},
	  "object_attributes":{"id":4417,"iid":58,"title":"ETA off by one minute","state":"opened",
	  "created_at":"2016-06-21 09:14:07 UTC","updated_at":"2016-06-21 09:14:07 UTC","action":"open"}}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
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
	stop()
	fmt.Println("stopped:", <-done)
	fmt.Printf("%+v\n", h.Stats())
	// Output:
	// answered 200
	// open #58 "ETA off by one minute" by praman at 09:14
	// stopped: <nil>
	// {Received:1 Rejected:0 Dropped:0 Duplicates:0 Ignored:0 Accepted:1 Handled:1 Retried:0 DeadLettered:0}
}
