package schedule

import (
	"container/heap"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A taker that leases a delivery due for a retry wakes another, so that the
// next retry time has a taker waiting for it while the first one works.
func TestScheduleRetriesDueLaterAreNotStranded(t *testing.T) {
	s := New()
	defer s.Close()
	var mu sync.Mutex
	s.Add(1, "a")
	s.Add(2, "b")
	e1, _ := s.next(time.Now())
	e2, _ := s.next(time.Now())
	require.Equal(t, []uint64{1, 2}, []uint64{e1.id, e2.id})
	<-s.signal // the token of the adds; the two takers below must sleep without one

	// Both takers look while nothing is due: they sleep with no timer.
	looked := make(chan struct{}, 2)
	s.now = func() time.Time { looked <- struct{}{}; return time.Now() }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan uint64, 2)
	for range 2 {
		go func() {
			id, err := s.Take(ctx, mu.Lock, mu.Unlock)
			if err != nil {
				id = 0
			}
			got <- id
		}()
	}
	<-looked
	<-looked
	mu.Lock()
	s.now = time.Now
	// Two retries made before either taker ran leave one token: one taker
	// wakes, and it alone waits for the earlier time.
	for _, e := range []*entry{e1, e2} {
		e.leased, e.at = false, time.Now().Add(time.Duration(e.id*e.id)*time.Millisecond)
		heap.Push(&s.later, e)
	}
	s.wake()
	mu.Unlock()
	assert.ElementsMatch(t, []uint64{1, 2}, []uint64{<-got, <-got})
}

// A taker woken as its context ends passes the wake on, so that another
// waiting taker gets the delivery. Which taker the wake reaches is up to the
// runtime, so the race is played many times.
func TestScheduleStoppedTakerPassesTheWakeOn(t *testing.T) {
	for range 30 {
		s := New()
		var mu sync.Mutex
		looked := make(chan struct{}, 2)
		s.now = func() time.Time { looked <- struct{}{}; return time.Now() }
		stopped, stop := context.WithCancel(context.Background())
		waiting, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		first, second := make(chan uint64, 1), make(chan uint64, 1)
		take := func(ctx context.Context, got chan<- uint64) {
			id, _ := s.Take(ctx, mu.Lock, mu.Unlock)
			got <- id
		}
		go take(stopped, first)
		<-looked
		go take(waiting, second)
		<-looked
		mu.Lock()
		s.now = time.Now
		s.Add(1, "")
		stop()
		mu.Unlock()
		a := <-first
		if a == 1 {
			cancel() // it took the delivery before it saw the stop
		}
		b := <-second
		cancel()
		s.Close()
		require.True(t, a == 1 || b == 1, "neither taker got the delivery: the waiting one was left asleep")
	}
}
