package otelcollab

import (
	"net"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/collabsvc/collab"
)

// maxCached bounds each cache below: past it, values are built per call,
// so that a program calling an unbounded set of hosts keeps bounded memory.
const maxCached = 1024

// cache keeps values built from a key, up to maxCached of them.
type cache[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// lookup returns the value kept for k.
func (c *cache[K, V]) lookup(k K) (V, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v, ok := c.m[k]
	return v, ok
}

// keep keeps v for k, unless a value is kept already (then it returns that
// one) or the cache is full.
func (c *cache[K, V]) keep(k K, v V) V {
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[k]; ok {
		return kept
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	if len(c.m) < maxCached {
		c.m[k] = v
	}
	return v
}

// route is what every call of one method, route template and server
// shares: the span's name and start options, and the duration metric's
// attribute sets, built once so that a call builds none.
type route struct {
	name             string
	method, template attribute.KeyValue
	server           []attribute.KeyValue // address, and port when the host names one
	start            []trace.SpanStartOption
	durations        cache[durationKey, options]
}

// durationKey names one attribute set of the duration metric.
type durationKey struct{ class, errorType string }

// routes caches a route per CallInfo.
type routes struct{ cache[collab.CallInfo, *route] }

func (rs *routes) get(ci collab.CallInfo) *route {
	if r, ok := rs.lookup(ci); ok {
		return r
	}
	return rs.keep(ci, newRoute(ci))
}

func newRoute(ci collab.CallInfo) *route {
	r := &route{name: ci.Name(), method: attrMethod.String(ci.Method), template: attrTemplate.String(ci.Route)}
	r.server = serverAttrs(ci.Host)
	r.start = []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append([]attribute.KeyValue{r.method, r.template}, r.server...)...),
	}
	return r
}

// durationSet is the duration metric's attributes for a status class and
// an error type ("" for none).
func (r *route) durationSet(class, errorType string) []metric.RecordOption {
	k := durationKey{class, errorType}
	if set, ok := r.durations.lookup(k); ok {
		return set.record
	}
	attrs := append([]attribute.KeyValue{r.method, r.template, attrStatusClass.String(class)}, r.server...)
	if errorType != "" {
		attrs = append(attrs, attrErrorType.String(errorType))
	}
	return r.durations.keep(k, optionsOf(attrs...)).record
}

// serverAttrs splits a host with an optional port.
func serverAttrs(host string) []attribute.KeyValue {
	h, p, err := net.SplitHostPort(host)
	if err != nil {
		return []attribute.KeyValue{attrServer.String(host)}
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return []attribute.KeyValue{attrServer.String(h)}
	}
	return []attribute.KeyValue{attrServer.String(h), attrPort.Int(port)}
}

// options is one attribute set as the option lists that Add and Record
// take, built once, so that a measurement allocates none.
type options struct {
	add    []metric.AddOption
	record []metric.RecordOption
}

func optionsOf(attrs ...attribute.KeyValue) options {
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	return options{add: []metric.AddOption{set}, record: []metric.RecordOption{set}}
}
