package diskqueue

import (
	"testing"
	"time"
)

// TestPowerCuts runs the crash harness over three workloads and checks
// every promise on every image (see checkImage): over 10,000 images, no
// failure (a tenth of them under the race detector).
func TestPowerCuts(t *testing.T) {
	workloads, perCut, least := uint64(3), 8, 10_000
	if raceOn {
		workloads, perCut, least = 1, 2, 500
	}
	total := 0
	start := time.Now()
	for seed := range workloads {
		h := newHarness(seed, noFault)
		if err := h.workload(150); err != nil {
			t.Fatalf("workload %d: %v", seed, err)
		}
		for _, kind := range []string{"log", "keys", "checkpoints"} {
			if h.fs.made[kind] == 0 || kind == "log" && h.fs.removed[kind] == 0 {
				t.Errorf("workload %d made %d %s files and removed %d", seed, h.fs.made[kind], kind, h.fs.removed[kind])
			}
		}
		n, failures := h.checkImages(perCut, seed)
		total += n
		for i, f := range failures {
			if i == 3 {
				t.Errorf("workload %d: %d failures in all", seed, len(failures))
				break
			}
			t.Errorf("workload %d: %s", seed, f)
		}
		t.Logf("workload %d: %d cuts, %d images, %d failures; %d deliveries, %d forged; files made %v, removed %v",
			seed, len(h.cuts), n, len(failures), h.keys, h.forged, h.fs.made, h.fs.removed)
	}
	if total < least {
		t.Errorf("%d images, fewer than %d", total, least)
	}
	t.Logf("%d images in %v", total, time.Since(start).Round(time.Millisecond))
}

// TestPowerCutsCatchBrokenQueues: the harness fails a queue whose syncs do
// nothing, whose directory syncs do nothing, or whose syncs each come
// before their write.
func TestPowerCutsCatchBrokenQueues(t *testing.T) {
	for _, f := range []fault{noopSync, noDirSync, syncBeforeWrite} {
		t.Run(f.String(), func(t *testing.T) {
			h := newHarness(1, f)
			if err := h.workload(60); err != nil {
				t.Fatalf("workload: %v", err)
			}
			n, failures := h.checkImages(4, 1)
			if len(failures) == 0 {
				t.Fatalf("%d images of a queue with %s, and no failure found", n, f)
			}
			t.Logf("%d of %d images fail; the first: %.300s", len(failures), n, failures[0])
		})
	}
}
