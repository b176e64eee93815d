package otelcollab

import (
	"context"
	"strconv"
	"testing"

	"github.com/collabsvc/collab"
)

// TestRouteCacheIsBounded: calls to ever new hosts keep at most maxCached
// routes, and a route past the bound still names its span and metric.
func TestRouteCacheIsBounded(t *testing.T) {
	o, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxCached + 50 {
		ci := collab.CallInfo{Method: "GET", Route: "/projects/:id", Host: "h" + strconv.Itoa(i) + ":443"}
		o.CallEnded(o.CallStarted(context.Background(), ci), collab.CallEnd{Status: 200, Attempts: 1})
		r := o.routes.get(ci)
		if r.name != "GET /projects/:id" || r.durationSet("2xx", "") == nil {
			t.Fatalf("route %d: %q", i, r.name)
		}
	}
	if n := len(o.routes.m); n != maxCached {
		t.Errorf("%d routes kept, want %d", n, maxCached)
	}
	r := o.routes.get(collab.CallInfo{Method: "GET", Route: "/x", Host: "h0:443"})
	for i := range maxCached + 50 {
		r.durationSet("5xx", strconv.Itoa(i))
	}
	if n := len(r.durations.m); n > maxCached {
		t.Errorf("%d duration sets kept, want at most %d", n, maxCached)
	}
}
