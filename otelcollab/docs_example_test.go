package otelcollab_test

import (
	"context"
	"fmt"
	"os"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/otelcollab"
	"github.com/collabsvc/collab/webhook"
)

// Example_docs is the snippet of docs/observability.md; compiled, not run.
func Example_docs() {
	url, token := "https://collab.example.com", os.Getenv("COLLAB_TOKEN")
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	onIssue := func(context.Context, *webhook.IssueEvent) error { return nil }
	run := func() error {
		obs, err := otelcollab.New() // the global providers; or WithTracerProvider, WithMeterProvider
		if err != nil {
			return err
		}
		c, err := collab.NewClient(url, collab.WithPrivateToken(token), collab.WithObserver(obs))
		if err != nil {
			return err
		}
		h, err := webhook.NewHandler(webhook.Options{Queue: q, Observer: obs, OnIssue: onIssue})
		if err != nil {
			return err
		}
		_, err = obs.ObserveQueue(q.Stats) // depth, oldest pending age, dead letters, read at each collection
		fmt.Println(c, h)
		return err
	}
	_ = run
}
