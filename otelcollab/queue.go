package otelcollab

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/collabsvc/collab/webhook"
)

// QueueStatsFunc reads a queue's state; the Stats method of every webhook.Queue is one.
type QueueStatsFunc func(context.Context) (webhook.QueueStats, error)

// ObserveQueue reports the state that stats reads as the observable gauges
// collab.webhook.queue.depth, collab.webhook.queue.oldest_age (s) and
// collab.webhook.queue.dead_letters, read each time metrics are collected.
// It returns a function that stops the reporting.
func (o *Observer) ObserveQueue(stats QueueStatsFunc) (unregister func() error, err error) {
	depth, err := o.meter.Int64ObservableGauge("collab.webhook.queue.depth", metric.WithUnit("{delivery}"),
		metric.WithDescription("Deliveries stored and not yet handled, leased ones included."))
	if err != nil {
		return nil, err
	}
	oldest, err := o.meter.Float64ObservableGauge("collab.webhook.queue.oldest_age", metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest pending delivery; 0 when none is pending."))
	if err != nil {
		return nil, err
	}
	dead, err := o.meter.Int64ObservableGauge("collab.webhook.queue.dead_letters", metric.WithUnit("{delivery}"),
		metric.WithDescription("Dead-lettered deliveries kept."))
	if err != nil {
		return nil, err
	}
	reg, err := o.meter.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		s, err := stats(ctx)
		if err != nil {
			return err
		}
		obs.ObserveInt64(depth, int64(s.Pending))
		obs.ObserveInt64(dead, int64(s.DeadLetters))
		age := 0.0
		if !s.Oldest.IsZero() {
			age = max(time.Since(s.Oldest).Seconds(), 0)
		}
		obs.ObserveFloat64(oldest, age)
		return nil
	}, depth, oldest, dead)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}
