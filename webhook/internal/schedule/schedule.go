// Package schedule decides which delivery a local queue hands out next.
package schedule

import (
	"container/heap"
	"context"
	"errors"
	"time"
)

// Schedule decides which delivery a local queue hands out next: the oldest
// ready one whose partition has nothing older still pending, leased or
// waiting for a retry. It holds ids only; the queues keep the records.
// Callers hold mu.
type Schedule struct {
	entries map[uint64]*entry
	parts   map[string][]*entry // the pending deliveries of each named partition, oldest first
	ready   readyHeap           // partition heads ready now, lowest id first
	later   laterHeap           // partition heads waiting for a retry time
	signal  chan struct{}       // holds a token when a delivery may have become ready
	done    chan struct{}       // closed by close
	empty   chan struct{}       // closed and replaced when entries becomes empty
	closed  bool
	now     func() time.Time // tests turn the clock (SetClock)
}

type entry struct {
	id     uint64
	part   string
	at     time.Time // not handed out before
	leased bool
}

// New returns an empty Schedule.
func New() Schedule {
	return Schedule{
		entries: map[uint64]*entry{},
		parts:   map[string][]*entry{},
		signal:  make(chan struct{}, 1),
		done:    make(chan struct{}),
		empty:   make(chan struct{}),
		now:     time.Now,
	}
}

// Add appends a delivery; ids must grow.
func (s *Schedule) Add(id uint64, part string) {
	e := &entry{id: id, part: part}
	s.entries[id] = e
	if part == "" {
		s.enqueue(e)
		return
	}
	s.parts[part] = append(s.parts[part], e)
	if len(s.parts[part]) == 1 {
		s.enqueue(e)
	}
}

// enqueue makes a partition head eligible, now or at its retry time.
func (s *Schedule) enqueue(e *entry) {
	if e.at.IsZero() {
		heap.Push(&s.ready, e)
	} else {
		heap.Push(&s.later, e)
	}
	s.wake()
}

// wake lets one waiting Take look again. Waking one rather than all keeps
// a busy queue from stirring every worker for each delivery; a Take that
// finds more ready passes the token on.
func (s *Schedule) wake() {
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// next leases the next ready delivery. When there is none it returns the
// time the earliest retry is due, or the zero time.
func (s *Schedule) next(now time.Time) (*entry, time.Time) {
	for s.later.Len() > 0 && !s.later.readyHeap[0].at.After(now) {
		e := heap.Pop(&s.later).(*entry)
		e.at = time.Time{}
		heap.Push(&s.ready, e)
	}
	if len(s.ready) > 0 {
		e := heap.Pop(&s.ready).(*entry)
		e.leased = true
		return e, time.Time{}
	}
	if s.later.Len() > 0 {
		return nil, s.later.readyHeap[0].at
	}
	return nil, time.Time{}
}

// Leased reports whether id is held under a lease.
func (s *Schedule) Leased(id uint64) bool {
	e := s.entries[id]
	return e != nil && e.leased
}

// Remove drops a leased delivery (acked or dead-lettered) and lets the next
// one of its partition go. It reports false when id is not leased.
func (s *Schedule) Remove(id uint64) bool {
	e := s.entries[id]
	if e == nil || !e.leased {
		return false
	}
	delete(s.entries, id)
	if e.part != "" {
		q := s.parts[e.part]
		q[0] = nil
		q = q[1:]
		if len(q) == 0 {
			delete(s.parts, e.part)
		} else {
			s.parts[e.part] = q
			s.enqueue(q[0])
		}
	}
	if len(s.entries) == 0 {
		close(s.empty)
		s.empty = make(chan struct{})
	}
	return true
}

// Retry ends a lease; the delivery stays at the head of its partition. It
// reports false when id is not leased.
func (s *Schedule) Retry(id uint64, at time.Time) bool {
	e := s.entries[id]
	if e == nil || !e.leased {
		return false
	}
	e.leased = false
	e.at = at
	s.enqueue(e)
	return true
}

// Close makes waiting and later Takes return ErrClosed.
func (s *Schedule) Close() {
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// Take waits for the next ready delivery and leases it. lock and unlock
// guard s.
func (s *Schedule) Take(ctx context.Context, lock, unlock func()) (uint64, error) {
	for {
		if err := ctx.Err(); err != nil {
			// This taker may hold a wake, or be the one waiting for the
			// next retry time: another must look instead.
			s.wake()
			return 0, err
		}
		lock()
		if s.closed {
			unlock()
			return 0, ErrClosed
		}
		now := s.now()
		e, due := s.next(now)
		// Pass the token on while more is ready, or due later: this taker
		// may have been the one waiting for that time.
		if e != nil && (s.ready.Len() > 0 || s.later.Len() > 0) {
			s.wake()
		}
		unlock()
		if e != nil {
			return e.id, nil
		}
		var timeout <-chan time.Time
		stop := func() bool { return false }
		if !due.IsZero() {
			t := time.NewTimer(due.Sub(now))
			timeout, stop = t.C, t.Stop
		}
		select {
		case <-s.signal:
		case <-s.done:
		case <-timeout:
		case <-ctx.Done():
		}
		stop()
	}
}

// WaitEmpty waits until no delivery is pending or leased.
func (s *Schedule) WaitEmpty(ctx context.Context, lock, unlock func()) error {
	lock()
	n, empty := len(s.entries), s.empty
	unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-empty:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type readyHeap []*entry

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].id < h[j].id }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(*entry)) }
func (h *readyHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

type laterHeap struct{ readyHeap }

func (h laterHeap) Less(i, j int) bool {
	a, b := h.readyHeap[i], h.readyHeap[j]
	return a.at.Before(b.at) || a.at.Equal(b.at) && a.id < b.id
}

// ErrClosed is returned by Take once Close was called.
var ErrClosed = errors.New("schedule closed")

// Len returns the number of deliveries pending, leased or waiting for a retry.
func (s *Schedule) Len() int { return len(s.entries) }

// Closed reports whether Close was called.
func (s *Schedule) Closed() bool { return s.closed }

// SetClock replaces the clock, for tests, and lets a waiting Take look again.
func (s *Schedule) SetClock(now func() time.Time) {
	s.now = now
	s.wake()
}
