package collab_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// The snippets of docs/*.md, compiled here (TestDocsSnippetsCompile checks
// that each stays verbatim in one of these functions). The Examples are not
// run: they show calls to a real server.

func Example_docsClient() {
	ctx := context.Background()
	token, pid := os.Getenv("COLLAB_TOKEN"), 42
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(token))
	if err != nil {
		log.Fatal(err)
	}
	alice := c.Sudo("alice") // a cheap copy of the client that sends SUDO: alice
	issue := &collab.Issue{ID: 1234}
	c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)}) // IssueClosed: compile error
	opt := &collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)}
	_, _ = alice, opt
}

func Example_docsClientRaw() {
	ctx := context.Background()
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	p, _, err := c.Projects.Get(ctx, "group/my.site")
	fmt.Println(p, err)
	req, _ := c.NewRequest(ctx, http.MethodGet, "projects/42/some_new_endpoint", nil)
	var out map[string]any
	resp, err := c.Do(req, &out)
	fmt.Println(resp, err)
}

func Example_docsClientIIDs() {
	ctx := context.Background()
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	issue, _, err := c.Issues.GetByIID(ctx, "group/project", 5) // "#5"
	if errors.Is(err, collab.ErrNotFound) {
		return // the project has no #5
	}
	_, _, err = c.Issues.Update(ctx, "group/project", issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	mr, _, err := c.MergeRequests.GetByIID(ctx, "group/project", 3) // "!3"
	fmt.Println(mr, err)
}

func Example_docsClientErrors() {
	ctx := context.Background()
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	pid := 42
	func() {
		_, _, err := c.Projects.Star(ctx, 42)
		switch {
		case errors.Is(err, collab.ErrNotModified): // already starred
		case errors.Is(err, collab.ErrNotFound):
		}
		var er *collab.ErrorResponse
		if errors.As(err, &er) {
			fmt.Println(er.StatusCode, er.Message, er.Fields) // validation errors flattened to "namespace.name"
		}
	}()
	func() {
		_, _, err := c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "red"})
		var arg *collab.ArgumentError
		if errors.As(err, &arg) { // errors.Is(err, collab.ErrInvalidArgument) too
			fmt.Println(arg.Arg, arg.Reason) // opt.Color must be # and six hex digits, got "red"
		}
	}()
}

// Example_docsClientIterators is also the README's iterator.
func Example_docsClientIterators() {
	ctx := context.Background()
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	run := func() error {
		for issue, err := range c.Issues.All(ctx, "group/project", &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueOpened)}) {
			if err != nil {
				return err // an error is always the last element
			}
			fmt.Printf("#%d (id %d) %s\n", issue.IID, issue.ID, issue.Title)
		}
		return nil
	}
	_ = run
}

func Example_docsClientLimits() {
	url, token := "https://collab.example.com", os.Getenv("COLLAB_TOKEN")
	c, err := collab.NewClient(url, collab.WithPrivateToken(token),
		collab.WithRateLimit(20, 5),    // 20 requests a second, bursts of 5 (golang.org/x/time/rate)
		collab.WithConcurrencyLimit(8)) // 8 in flight; a streamed body holds its place until closed
	fmt.Println(c, err)
}

func Example_docsRunner() {
	ctx := context.Background()
	runnerToken := os.Getenv("RUNNER_TOKEN")
	zipFile := bytes.NewReader(nil)
	run := func() error {
		rc, err := runner.NewClient("https://collab.example.com")
		if err != nil {
			return err
		}
		b, err := rc.RequestBuild(ctx, runnerToken, &runner.Info{Name: "my-runner"})
		if err != nil || b == nil {
			return err // b == nil: nothing to do
		}
		tw := rc.NewTraceWriter(ctx, b.ID, string(b.Token), runner.TraceWriterOptions{})
		// run b.Commands with tw as stdout and stderr; stop when <-tw.Canceled()
		if err := tw.Close(); err != nil {
			return err
		}
		_, err = rc.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", zipFile, &runner.UploadArtifactsOptions{ExpireIn: "7 days"})
		if err != nil {
			return err
		}
		return rc.UpdateBuild(ctx, b.ID, runnerToken, collab.BuildSuccess, nil)
	}
	_ = run
}

func Example_docsRunnerRegister() {
	ctx := context.Background()
	registrationToken := os.Getenv("REGISTRATION_TOKEN")
	run := func() error {
		rc, err := runner.NewClient("https://collab.example.com")
		if err != nil {
			return err
		}
		no := false
		reg, err := rc.RegisterRunner(ctx, registrationToken, &runner.RegisterRunnerOptions{
			Description: "docker-01", Tags: []string{"docker", "linux"}, RunUntagged: &no,
		})
		if err != nil {
			return err
		}
		runnerToken := string(reg.Token)
		defer rc.DeleteRunner(context.WithoutCancel(ctx), runnerToken)
		return rc.VerifyRunner(ctx, runnerToken) // nil: alive (also when paused); collab.ErrForbidden: removed
	}
	_ = run
}

func Example_docsWebhooks() {
	ctx := context.Background()
	run := func() error {
		q, err := diskqueue.Open("/var/lib/mybot/queue", diskqueue.Options{}) // 0700 directory, 0600 files
		if err != nil {
			return err // a damaged or locked queue is an error, never a silent reset
		}
		defer q.Close() // after the handler stopped
		h, err := webhook.NewHandler(webhook.Options{
			Secret: os.Getenv("WEBHOOK_SECRET"), // checked against X-Gitlab-Token in constant time; 401 when wrong or missing
			Queue:  q,
			OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
				d := webhook.DeliveryFrom(ctx) // d.Key and d.Attempt, to make the callback idempotent
				if d.Superseded {
					return nil // a late repeat: a later state of this issue was handled already
				}
				if e.ObjectAttributes == nil {
					return nil // nothing to act on; the event types say which fields a server may leave out
				}
				p := e.ProjectInfo() // from "project", else "repository": some servers send only the latter
				log.Printf("%s %s#%d %q (attempt %d)", e.ObjectAttributes.Action, p.PathWithNamespace, e.ObjectAttributes.IID,
					e.ObjectAttributes.Title, d.Attempt)
				return nil // an error or a panic: tried again later, then dead-lettered
			},
		})
		if err != nil {
			return err
		}
		// The workers, the deliveries, /healthz; when ctx ends, the stop sequence below.
		return webhook.ListenAndServe(ctx, ":8090", h)
	}
	_ = run
}

// TestDocsFakeServer runs the fake server's snippets of docs/testing.md.
func TestDocsFakeServer(t *testing.T) {
	srv := collabtest.NewTestServer(t) // closed when the test ends
	c, _ := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	ctx := t.Context()

	alice := srv.Seed.User("alice")
	p := srv.Seed.Project(alice, "Webshop", collab.InternalVisibility)
	srv.Seed.Member(p, srv.Seed.User("bob"), collab.DeveloperAccess)
	bug := srv.Seed.Label(p, "bug", "#d9534f")
	is := srv.Seed.Issue(p, alice, "Checkout fails", bug) // labels are the project's, as on a real server
	srv.Seed.IssueNote(is, alice, "Also on mobile")
	srv.Seed.Branch(p, "fix/checkout")
	srv.Seed.MergeRequest(p, alice, "fix/checkout", "master", "Fix checkout")
	srv.Seed.Milestone(p, "v1.0")
	srv.Seed.Build(p, collabtest.BuildSpec{Name: "rspec", Status: "failed"})
	require.NoError(t, srv.Err())

	projectID := srv.Seed.Project(srv.Admin, "App", collab.PrivateVisibility).ID
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer receiver.Close()
	hook, _, err := c.Hooks.Add(ctx, projectID, &collab.AddHookOptions{URL: receiver.URL, PushEvents: collab.Ptr(true)})
	require.NoError(t, err)
	srv.SetHookToken(hook.ID, "s3cret")                                // the API of this version cannot set it
	srv.InjectDeliveryFault(collabtest.DeliveryFault{Duplicate: true}) // the next delivery is sent twice; also Drop, Delay
	head, err := srv.Push(projectID, "feature", collabtest.PushCommit{Message: "Fix ETA", Added: []string{"eta.go"}})
	require.NoError(t, err)
	ds, err := srv.WaitDeliveries(ctx, 2) // no sleeps: wait for delivery attempts
	require.NoError(t, err)
	err = srv.WaitIdle(ctx) // or until nothing is queued or in flight
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.NotEmpty(t, head)
	require.Equal(t, "s3cret", ds[0].Header.Get("X-Gitlab-Token"))
}
