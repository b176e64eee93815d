package collab_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// The README's snippets, compiled here (TestDocsSnippetsCompile checks that
// each stays verbatim in one of these functions). They are not run: they
// need a real server.

func Example_readmeQuickStart() {
	ctx := context.Background()
	run := func() error {
		c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
		if err != nil {
			return err
		}
		issue, _, err := c.Issues.Create(ctx, "group/project", &collab.CreateIssueOptions{Title: "Crash on save"})
		if err != nil {
			return err
		}
		fmt.Printf("opened #%d (id %d)\n", issue.IID, issue.ID)
		return nil
	}
	_ = run
}

func Example_readmeAuthentication() {
	baseURL, token := "https://collab.example.com", "token"
	run := func() error {
		c, err := collab.NewClient(baseURL,
			collab.WithPrivateToken(token), // or WithPersonalAccessToken, WithOAuthToken
			collab.WithRateLimit(20, 5),    // 20 requests a second, bursts of 5, halved on each 429
			collab.WithConcurrencyLimit(8)) // 8 in flight
		if err != nil {
			return err
		}
		defer c.Close()
		alice := c.Sudo("alice") // a copy that acts as alice (administrators only)
		_ = alice
		return nil
	}
	_ = run
}

func Example_readmeErrors() {
	ctx := context.Background()
	c, err := collab.NewClient("https://collab.example.com")
	if err != nil {
		log.Fatal(err)
	}
	func() {
		_, _, err := c.Projects.Get(ctx, "group/missing")
		var er *collab.ErrorResponse
		switch {
		case errors.Is(err, collab.ErrNotFound):
			fmt.Println("no such project")
		case errors.As(err, &er):
			fmt.Println(er.StatusCode, er.Message, er.Fields)
		case errors.Is(err, collab.ErrInvalidArgument):
			fmt.Println("refused before sending:", err)
		}
	}()
}

func Example_readmeWebhooks() {
	ctx := context.Background()
	run := func() error {
		q, err := diskqueue.Open("/var/lib/mybot/queue", diskqueue.Options{})
		if err != nil {
			return err
		}
		defer q.Close() // after the handler stopped
		h, err := webhook.NewHandler(webhook.Options{
			Secret: os.Getenv("WEBHOOK_SECRET"),
			Queue:  q,
			OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
				log.Printf("%s #%d %q", e.ObjectAttributes.Action, e.ObjectAttributes.IID, e.ObjectAttributes.Title)
				return nil // an error or a panic: tried again later, then dead-lettered
			},
		})
		if err != nil {
			return err
		}
		return webhook.ListenAndServe(ctx, ":8090", h) // until ctx ends, then the stop sequence
	}
	_ = run
}

// TestReadmeCollabtest runs the README's test against the fake.
func TestReadmeCollabtest(t *testing.T) {
	srv := collabtest.NewTestServer(t)                                // closed when the test ends
	p := srv.Seed.Project(srv.Admin, "App", collab.PrivateVisibility) // the record the API answers
	srv.Seed.Issue(p, srv.Admin, "Crash on start", srv.Seed.Label(p, "bug", "#d9534f"))
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.Admin.Token))
	require.NoError(t, err)
	issues, _, err := c.Issues.List(context.Background(), p.ID, nil)
	require.NoError(t, err)
	require.Len(t, issues, 1)
}
