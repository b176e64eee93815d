package otelcollab_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/collabsvc/collab/otelcollab"
)

// recorder is an Observer whose spans and metrics stay in memory.
type recorder struct {
	obs    *otelcollab.Observer
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

func newRecorder(t testing.TB) *recorder {
	r := &recorder{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	obs, err := otelcollab.New(otelcollab.WithTracerProvider(r.tp), otelcollab.WithMeterProvider(mp))
	require.NoError(t, err)
	r.obs = obs
	return r
}

// ended returns the spans ended so far with the given name.
func (r *recorder) ended(name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range r.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// metrics collects every metric now, by name.
func (r *recorder) metrics(t testing.TB) map[string]metricdata.Aggregation {
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// attrs turns a span's or a point's attributes into a map.
func attrs(kvs []attribute.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// only returns the one point whose attributes include want; it fails
// unless exactly one matches.
func only[P any](t testing.TB, points []P, set func(P) attribute.Set, want map[string]any) P {
	t.Helper()
	var found []P
	for _, p := range points {
		if s := set(p); includes(attrs(s.ToSlice()), want) {
			found = append(found, p)
		}
	}
	require.Len(t, found, 1, "points matching %v in %+v", want, points)
	return found[0]
}

// sum returns the value of the sum point whose attributes include want.
func sum[N int64 | float64](t testing.TB, data metricdata.Aggregation, want map[string]any) N {
	t.Helper()
	s, ok := data.(metricdata.Sum[N])
	require.True(t, ok, "not a sum: %T", data)
	return only(t, s.DataPoints, func(p metricdata.DataPoint[N]) attribute.Set { return p.Attributes }, want).Value
}

// histogramCount returns the count and sum of the histogram point whose
// attributes include want.
func histogramCount[N int64 | float64](t testing.TB, data metricdata.Aggregation, want map[string]any) (uint64, N) {
	t.Helper()
	h, ok := data.(metricdata.Histogram[N])
	require.True(t, ok, "not a histogram: %T", data)
	p := only(t, h.DataPoints, func(p metricdata.HistogramDataPoint[N]) attribute.Set { return p.Attributes }, want)
	return p.Count, p.Sum
}

// gauge returns the value of the gauge point whose attributes include want.
func gauge[N int64 | float64](t testing.TB, data metricdata.Aggregation, want map[string]any) N {
	t.Helper()
	g, ok := data.(metricdata.Gauge[N])
	require.True(t, ok, "not a gauge: %T", data)
	return only(t, g.DataPoints, func(p metricdata.DataPoint[N]) attribute.Set { return p.Attributes }, want).Value
}

func includes(got, want map[string]any) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
