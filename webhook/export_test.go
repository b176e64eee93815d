package webhook

import (
	"reflect"
	"time"
)

// For the tests of package webhook_test.
var SameJSON = sameJSON

// ExtraKeys returns the path of every key of v that found no field.
func ExtraKeys(v any) map[string]bool {
	out := map[string]bool{}
	collectExtra(reflect.ValueOf(v), "$", out)
	return out
}

// SetMemoryClock turns the clock of q.
func SetMemoryClock(q *MemoryQueue, now func() time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.s.SetClock(now)
}
