package queuetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
)

// brokenEnv names, in the child process, the promise the queue under test
// breaks.
const brokenEnv = "QUEUETEST_BROKEN"

// broken wraps a MemoryQueue and breaks one promise of webhook.Queue.
type broken struct {
	*webhook.MemoryQueue
	how string
}

func (b broken) Ack(ctx context.Context, id uint64) error {
	if err := b.MemoryQueue.Ack(ctx, id); err != nil && b.how != "AckAnything" {
		return err
	}
	return nil
}

func (b broken) Put(ctx context.Context, d *webhook.Delivery) error {
	if b.how == "PutAfterClose" && b.Check(ctx) != nil {
		return nil
	}
	return b.MemoryQueue.Put(ctx, d)
}

func (b broken) Seen(ctx context.Context, key string) (bool, error) {
	seen, err := b.MemoryQueue.Seen(ctx, key)
	return seen && b.how != "ForgetKeys", err
}

func (b broken) Checkpoint(ctx context.Context, name string) ([]byte, error) {
	v, err := b.MemoryQueue.Checkpoint(ctx, name)
	if b.how == "EmptyCheckpoint" && v == nil {
		v = []byte{}
	}
	return v, err
}

// TestBroken runs the suite on a queue broken as brokenEnv says; it is run
// by TestSuiteFails only.
func TestBroken(t *testing.T) {
	how := os.Getenv(brokenEnv)
	if how == "" {
		t.Skip("run by TestSuiteFails")
	}
	queuetest.Run(t, queuetest.Maker{Open: func(t *testing.T, maxPending int, maxBytes int64) queuetest.Queue {
		q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{MaxPending: maxPending, MaxBytes: maxBytes})
		t.Cleanup(func() { _ = q.Close() })
		return broken{q, how}
	}})
}

// TestSuiteFails: each broken promise fails the check that covers it, and
// the intact queue passes.
func TestSuiteFails(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	for how, check := range map[string]string{
		"AckAnything":     "NotLeased",
		"PutAfterClose":   "Close",
		"ForgetKeys":      "Dedup",
		"EmptyCheckpoint": "Checkpoints",
		"None":            "",
	} {
		t.Run(how, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBroken$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+how)
			out, err := cmd.CombinedOutput()
			if check == "" {
				if err != nil {
					t.Fatalf("the intact queue failed: %v\n%s", err, out)
				}
				return
			}
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestBroken/"+check+" ") {
				t.Fatalf("a queue that breaks %s did not fail the check %s: %v\n%s", how, check, err, out)
			}
		})
	}
}
