package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/collabsvc/collab"
)

// DedupStore remembers the deliveries a Handler has accepted, to suppress
// the same event delivered again. The server sends no delivery id, and sends
// the same body again when a receiver took longer than its timeout to
// answer. Receivers behind one load balancer can share a store (a database
// or cache of your choice) so that a repeat reaching another instance is
// also suppressed.
type DedupStore interface {
	// Seen records key for window and reports whether it was already
	// recorded and has not expired. Of two concurrent calls with one key,
	// only one may report false.
	Seen(ctx context.Context, key string, window time.Duration) (bool, error)
}

// MemoryStore is a DedupStore in memory, safe for concurrent use. Expired
// keys are swept as new ones arrive, so it holds about one window's worth of
// deliveries.
type MemoryStore struct {
	mu        sync.Mutex
	until     map[string]time.Time
	nextSweep time.Time
	now       func() time.Time
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{until: map[string]time.Time{}, now: time.Now}
}

// Seen implements DedupStore.
func (s *MemoryStore) Seen(_ context.Context, key string, window time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.After(s.nextSweep) {
		for k, until := range s.until {
			if !now.Before(until) {
				delete(s.until, k)
			}
		}
		s.nextSweep = now.Add(window)
	}
	if until, ok := s.until[key]; ok && now.Before(until) {
		return true, nil
	}
	s.until[key] = now.Add(window)
	return false, nil
}

// Len returns the number of keys held, expired ones included until the
// next sweep.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.until)
}

// DedupKey returns the identity of a delivery: the same for the same event
// delivered twice, different for different events. It is built from the
// payload's own identifiers: for a push or tag push the project, ref, before
// and after; for an issue or merge request its id, action and updated_at;
// for a note its id; for a build its id and status. Other events, and
// payloads missing those values, are keyed by a hash of the body.
//
// updated_at has one-second resolution, so two edits of one issue or merge
// request within the same second share a key, and the second is taken for a
// repeat.
func DedupKey(ev Event, body []byte) string {
	switch e := ev.(type) {
	case *PushEvent:
		if e.After != "" {
			return fmt.Sprintf("push/%d/%s/%s/%s", e.ProjectID, e.Ref, e.Before, e.After)
		}
	case *TagPushEvent:
		if e.After != "" {
			return fmt.Sprintf("tag_push/%d/%s/%s/%s", e.ProjectID, e.Ref, e.Before, e.After)
		}
	case *IssueEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return fmt.Sprintf("issue/%d/%s/%s", a.ID, a.Action, instant(a.UpdatedAt))
		}
	case *MergeRequestEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return fmt.Sprintf("merge_request/%d/%s/%s", a.ID, a.Action, instant(a.UpdatedAt))
		}
	case *NoteEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return fmt.Sprintf("note/%d", a.ID)
		}
	case *BuildEvent:
		if e.BuildID != 0 {
			return fmt.Sprintf("build/%d/%s", e.BuildID, e.BuildStatus)
		}
	}
	sum := sha256.Sum256(body)
	return "body/" + hex.EncodeToString(sum[:])
}

func instant(t *collab.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
