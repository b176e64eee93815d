package main

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/collabsvc/collab/otelcollab"
)

// metrics is the bot's OpenTelemetry metrics, exported for Prometheus: it
// serves the scrape page (mount it on /metrics), and its Observer records
// the client's calls (collab.WithObserver) and the handler's deliveries
// (webhook.Options.Observer); Observer.ObserveQueue(queue.Stats) adds the
// queue's gauges, read at each scrape.
type metrics struct {
	Observer *otelcollab.Observer
	provider *sdkmetric.MeterProvider
	page     http.Handler
}

// newMetrics builds the meter provider, the Prometheus exporter that reads
// it, and the observer. Traces go to the global tracer provider, which
// records nothing unless the program sets one.
func newMetrics() (*metrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	obs, err := otelcollab.New(otelcollab.WithMeterProvider(mp))
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return nil, err
	}
	page := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return &metrics{Observer: obs, provider: mp, page: page}, nil
}

// ServeHTTP serves the scrape page, in the Prometheus text format.
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.page.ServeHTTP(w, r) }

// Shutdown stops the meter provider.
func (m *metrics) Shutdown(ctx context.Context) error { return m.provider.Shutdown(ctx) }
