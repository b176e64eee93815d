package webhook

import (
	"strings"
	"sync"
	"time"
)

// maxLatest bounds the objects whose latest handled state a Handler keeps;
// past it, it starts afresh.
const maxLatest = 100_000

// latestStates keeps, per issue or merge request, the updated_at of the
// latest state handled, to tell a late repeat from the current state.
type latestStates struct {
	mu sync.Mutex
	at map[string]time.Time // partition -> updated_at
}

// stateOf splits a StateKey ("issue/12/2016-06-21T09:14:07Z") into its
// object and its time.
func stateOf(d *Delivery) (string, time.Time, bool) {
	if d.Kind != KindIssue && d.Kind != KindMergeRequest {
		return "", time.Time{}, false
	}
	i := strings.LastIndexByte(d.StateKey, '/')
	if i < 0 {
		return "", time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, d.StateKey[i+1:])
	return d.StateKey[:i], t, err == nil
}

// newer reports whether a later state of d's object was handled.
func (l *latestStates) newer(d *Delivery) bool {
	obj, t, ok := stateOf(d)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at[obj].After(t)
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
		l.at = map[string]time.Time{}
	}
	if t.After(l.at[obj]) {
		l.at[obj] = t
	}
}
