package webhook

import (
	"strings"
	"sync"
)

// maxLatest bounds the objects whose latest handled state a Handler keeps;
// past it, it starts afresh.
const maxLatest = 100_000

// latestStates keeps, per issue or merge request, the updated_at of the
// latest state handled, to tell a late repeat from the current state.
type latestStates struct {
	mu sync.Mutex
	at map[string]string // object -> updated_at
}

// stateOf splits a StateKey ("issue/12/2016-06-21T09:14:07Z") into its
// object and its time. The times are RFC 3339 in UTC to the second, which
// sort as strings in time order.
func stateOf(d *Delivery) (string, string, bool) {
	if d.Kind != KindIssue && d.Kind != KindMergeRequest {
		return "", "", false
	}
	i := strings.LastIndexByte(d.StateKey, '/')
	if i < 0 || len(d.StateKey)-i-1 != len("2006-01-02T15:04:05Z") || !strings.HasSuffix(d.StateKey, "Z") {
		return "", "", false
	}
	return d.StateKey[:i], d.StateKey[i+1:], true
}

// newer reports whether a later state of d's object was handled.
func (l *latestStates) newer(d *Delivery) bool {
	obj, t, ok := stateOf(d)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at[obj] > t
}

// handled records d's state as handled.
func (l *latestStates) handled(d *Delivery) {
	obj, t, ok := stateOf(d)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at == nil || len(l.at) >= maxLatest {
		l.at = map[string]string{}
	}
	if t > l.at[obj] {
		l.at[obj] = t
	}
}
