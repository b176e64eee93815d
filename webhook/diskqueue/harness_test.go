package diskqueue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// The crash harness runs a workload on a crashFS. At every sync, and at
// random steps between, it takes a snapshot; from each it makes images, as
// a power cut there could leave the disk, opens the queue on each, drains
// it, and checks the queue's promises against what the workload knew at
// the cut (see checkImage).

// phase is where a delivery of the workload stands.
type phase uint8

const (
	phPutting  phase = iota + 1 // its Put is under way
	phStored                    // its Put returned
	phLeaving                   // an Ack or a DeadLetter of it is under way
	phAcked                     // its Ack returned
	phDead                      // its DeadLetter returned
	phDeleting                  // a Delete of it is under way
	phDeleted                   // its Delete returned
)

// event is a step of the workload: a delivery's phase, a checkpoint set
// (cpDone) or being set, or a sync.
type event struct {
	key    string
	phase  phase
	id     uint64
	body   []byte
	cp     string
	cpDone bool
	synced bool // a flush, a Close or a drain returned: what was written is synced
}

// crashModel records what the workload did, in order, so that what it
// knew at a cut is the events before the cut's mark.
type crashModel struct {
	mu     sync.Mutex
	events []event
}

func (m *crashModel) note(e event) {
	m.mu.Lock()
	m.events = append(m.events, e)
	m.mu.Unlock()
}

func (m *crashModel) mark() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.events)
}

// delivery is what the workload knew of one delivery.
type delivery struct {
	body   []byte
	id     uint64
	phase  phase
	synced bool // its phase was synced: an ack or a dead-lettering no cut undoes
}

// knowledge is what the workload knew at a cut.
type knowledge struct {
	dels  map[string]*delivery
	maxID uint64              // of the deliveries whose Put returned
	cps   map[string][][]byte // a checkpoint's last value set, then those being set
	set   map[string]bool     // the checkpoints set at least once
}

func (m *crashModel) at(n int) *knowledge {
	m.mu.Lock()
	events := m.events[:n]
	m.mu.Unlock()
	k := &knowledge{dels: map[string]*delivery{}, cps: map[string][][]byte{}, set: map[string]bool{}}
	for _, e := range events {
		if e.synced {
			for _, d := range k.dels {
				d.synced = true
			}
			continue
		}
		if e.cp != "" {
			if e.cpDone {
				k.cps[e.cp], k.set[e.cp] = [][]byte{e.body}, true
			} else {
				k.cps[e.cp] = append(k.cps[e.cp], e.body)
			}
			continue
		}
		d := k.dels[e.key]
		if d == nil {
			d = &delivery{body: e.body}
			k.dels[e.key] = d
		}
		d.phase, d.synced = e.phase, false
		if e.id != 0 {
			d.id = e.id
			k.maxID = max(k.maxID, e.id)
		}
	}
	return k
}

// harness is one run of a workload and the checks of its images.
type harness struct {
	fs     *crashFS
	model  crashModel
	rng    *rand.Rand
	sizes  sizes
	cutsMu sync.Mutex
	cuts   []*snapshot
	q      *Queue
	keys   int // keys made
	forged int // bodies that hold records of the queue's format
}

const harnessDir = "/var/lib/bot/queue"

// harnessSizes make segments small, so that a short workload rolls,
// removes and copies forward many of them.
var harnessSizes = sizes{segMax: 12 << 10, drainedRoll: 4 << 10, copyAfter: 0}

func newHarness(seed uint64, f fault) *harness {
	h := &harness{fs: newCrashFS(seed), rng: rand.New(rand.NewPCG(seed, 7)), sizes: harnessSizes}
	h.fs.fault = f
	h.fs.onCut = func(s *snapshot) {
		s.model = h.model.mark()
		h.cutsMu.Lock()
		h.cuts = append(h.cuts, s)
		h.cutsMu.Unlock()
	}
	return h
}

func (h *harness) open() error {
	q, err := openOn(h.fs, harnessDir, Options{}, h.sizes)
	h.q = q
	return err
}

// body returns a body for a new delivery: most a few bytes to a few
// sectors of JSON; some forged, holding records of the queue's own format
// with their checksums, at many offsets.
func (h *harness) body() ([]byte, bool) {
	if h.rng.IntN(4) == 0 {
		h.forged++
		return forgedBody(h.rng, fmt.Sprint("forged-", h.forged)), true
	}
	n := []int{8, 100, 500, 1500, 3000}[h.rng.IntN(5)]
	return fmt.Appendf(nil, `{"k":%d,"pad":"%s"}`, h.keys, strings.Repeat("x", n)), false
}

// forgedBody returns a body that holds, at offsets of every alignment,
// marks vouching for far more than was synced and put records of a
// delivery keyed key, each whole, as the queue would write them.
func forgedBody(rng *rand.Rand, key string) []byte {
	var b []byte
	for i := range 4 {
		b = append(b, bytes.Repeat([]byte{'{'}, rng.IntN(sector))...)
		b = appendRecord(b, tMark, 1<<40, nil, nil, 0)
		meta := appendMeta(nil, &webhook.Delivery{Key: key, Kind: webhook.KindIssue, Partition: "p0"}, time.Now().UnixNano())
		fake := fmt.Appendf(nil, `{"forged":%d}`, i)
		b = appendRecord(b, tPut, uint64(1000+i), meta, fake, checksum(fake))
		b = appendRecord(b, tRetry, uint64(1000+i), []byte("forged"), nil, 0)
	}
	return b
}

// workload runs steps steps of stores, takes, retries, dead letters, acks,
// deletes, checkpoints, Compacts, flushes and reopens; rolls, removals,
// copies forward and key files come of them.
func (h *harness) workload(steps int) error {
	if err := h.open(); err != nil {
		return err
	}
	ctx := context.Background()
	for range steps {
		var err error
		switch r := h.rng.IntN(100); {
		case r < 35:
			err = h.burst(1 + h.rng.IntN(6))
		case r < 75:
			err = h.handle(ctx)
		case r < 80:
			err = h.q.Compact()
		case r < 86:
			name := fmt.Sprint("cp", h.rng.IntN(2))
			v := fmt.Appendf(nil, "v%d", h.rng.Uint32())
			h.model.note(event{cp: name, body: v})
			err = h.q.SetCheckpoint(ctx, name, v)
			h.model.note(event{cp: name, body: v, cpDone: true})
		case r < 90:
			err = h.deleteOne(ctx)
		case r < 94:
			h.q.flush()
			h.model.note(event{synced: true})
		case r < 97:
			err = h.drain(ctx)
		default:
			if err = h.q.Close(); err == nil {
				h.model.note(event{synced: true})
				err = h.open()
			}
		}
		if err != nil {
			return err
		}
	}
	return h.q.Close()
}

// burst puts n deliveries at once, so that they share groups.
func (h *harness) burst(n int) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		h.keys++
		key := fmt.Sprint("k", h.keys)
		body, _ := h.body()
		d := &webhook.Delivery{Key: key, Kind: webhook.KindIssue, Partition: fmt.Sprint("p", h.rng.IntN(3)), Body: body}
		h.model.note(event{key: key, phase: phPutting, body: body})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = h.q.Put(context.Background(), d); errs[i] == nil {
				h.model.note(event{key: key, phase: phStored, id: d.ID})
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handle takes a delivery, if one is ready, and acks, retries or
// dead-letters it.
func (h *harness) handle(ctx context.Context) error {
	if h.q.Len() == 0 {
		return nil
	}
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	d, err := h.q.Take(tctx)
	cancel()
	if errors.Is(err, context.DeadlineExceeded) {
		return nil // held by retries
	} else if err != nil {
		return err
	}
	switch r := h.rng.IntN(10); {
	case r < 6:
		h.model.note(event{key: d.Key, phase: phLeaving})
		if err := h.q.Ack(ctx, d.ID); err != nil {
			return err
		}
		h.model.note(event{key: d.Key, phase: phAcked})
	case r < 8:
		return h.q.Retry(ctx, d.ID, time.Now().Add(2*time.Millisecond), "try again")
	default:
		h.model.note(event{key: d.Key, phase: phLeaving})
		if err := h.q.DeadLetter(ctx, d.ID, "given up"); err != nil {
			return err
		}
		h.model.note(event{key: d.Key, phase: phDead})
	}
	return nil
}

// drain handles every delivery and deletes every dead letter, so that the
// log rolls to a new segment and the old ones go; a reopen follows.
func (h *harness) drain(ctx context.Context) error {
	for h.q.Len() > 0 {
		d, err := h.q.Take(ctx)
		if err != nil {
			return err
		}
		h.model.note(event{key: d.Key, phase: phLeaving})
		if err := h.q.Ack(ctx, d.ID); err != nil {
			return err
		}
		h.model.note(event{key: d.Key, phase: phAcked})
	}
	for {
		dls, err := h.q.DeadLetters(ctx)
		if err != nil || len(dls) == 0 {
			break
		}
		if err := h.deleteOne(ctx); err != nil {
			return err
		}
	}
	h.q.flush()
	if err := h.q.Close(); err != nil {
		return err
	}
	h.model.note(event{synced: true})
	return h.open()
}

// deleteOne deletes a dead letter, if there is one.
func (h *harness) deleteOne(ctx context.Context) error {
	dls, err := h.q.DeadLetters(ctx)
	if err != nil || len(dls) == 0 {
		return err
	}
	d := dls[h.rng.IntN(len(dls))]
	h.model.note(event{key: d.Key, phase: phDeleting})
	if err := h.q.Delete(ctx, d.ID); err != nil {
		return err
	}
	h.model.note(event{key: d.Key, phase: phDeleted})
	return nil
}

// checkImages makes perCut images of every cut, checks each and returns
// how many it checked and the failures, each naming its cut and image.
func (h *harness) checkImages(perCut int, seed uint64) (int, []string) {
	type job struct {
		cut  int
		s    *snapshot
		k    *knowledge
		mode cutMode
		seed uint64
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var failures []string
	var checked atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				img := j.s.image(j.mode, rand.New(rand.NewPCG(j.seed, uint64(j.cut))))
				if err := checkImage(img, j.k, h.sizes); err != nil {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("cut %d of %d, image %s: %v", j.cut, len(h.cuts), j.mode, err))
					mu.Unlock()
				}
				checked.Add(1)
			}
		}()
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	for i, s := range h.cuts {
		k := h.model.at(s.model)
		for n := range perCut {
			mode := cutMode{files: n % fileModes, dirs: rng.IntN(3)}
			if n >= fileModes {
				mode.files = rng.IntN(fileModes)
			}
			jobs <- job{i, s, k, mode, rng.Uint64()}
		}
	}
	close(jobs)
	wg.Wait()
	return int(checked.Load()), failures
}

// checkImage opens the queue on img and checks every promise against k,
// what the workload knew at the cut:
//   - the queue opens, and finds no damage (a power cut is none);
//   - every delivery whose Put returned is handed out, or was handled
//     (acked, dead-lettered, deleted) before the cut;
//   - a delivery whose Put had not returned is handed out intact, or a
//     repeat of it is accepted: never answered as a duplicate;
//   - nothing is handed out or dead-lettered that was never stored, or was
//     deleted, and every body handed out is the one stored, under its id;
//   - an id given after the open is higher than every id given before;
//   - every key stored is remembered as seen;
//   - a checkpoint reads as the last value set, or one being set.
func checkImage(img *crashFS, k *knowledge, sz sizes) (err error) {
	logs := &strings.Builder{}
	var logMu sync.Mutex
	q, err := openOn(img, harnessDir, Options{Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, logs}, nil))}, sz)
	if err != nil {
		return fmt.Errorf("does not open: %w", err)
	}
	defer func() {
		if cerr := q.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
		if err != nil {
			logMu.Lock()
			err = fmt.Errorf("%w\nqueue log:\n%s", err, logs.String())
			logMu.Unlock()
		}
	}()
	ctx := context.Background()
	if st, _ := q.Stats(ctx); st.Damaged != 0 {
		return fmt.Errorf("%d damaged records found after a power cut", st.Damaged)
	}
	handed := map[string]bool{}
	var top uint64 // the highest id handed out in the drain
	for q.Len() > 0 {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := q.Take(tctx)
		cancel()
		if err != nil {
			return fmt.Errorf("take with %d pending: %w", q.Len(), err)
		}
		if err := k.check(d, "handed out", phPutting, phStored, phLeaving, phAcked, phDead, phDeleting); err != nil {
			return err
		}
		if handed[d.Key] {
			return fmt.Errorf("%s handed out twice", d.Key)
		}
		handed[d.Key], top = true, max(top, d.ID)
		if err := q.Ack(ctx, d.ID); err != nil {
			return err
		}
	}
	dls, err := q.DeadLetters(ctx)
	if err != nil {
		return err
	}
	deadOnes := map[string]bool{}
	for _, d := range dls {
		if err := k.check(d, "dead-lettered", phLeaving, phDead, phDeleting); err != nil {
			return err
		}
		deadOnes[d.Key], top = true, max(top, d.ID)
	}
	for key, d := range k.dels {
		kept := handed[key] || deadOnes[key]
		seen, _ := q.Seen(ctx, key)
		switch {
		case d.phase == phStored && !handed[key]:
			return fmt.Errorf("%s (id %d) lost: its Put returned", key, d.id)
		case d.phase == phDead && !kept:
			return fmt.Errorf("dead letter %s (id %d) lost", key, d.id)
		case d.phase == phDead && d.synced && !deadOnes[key]:
			return fmt.Errorf("dead letter %s (id %d), synced, handed out again", key, d.id)
		case d.phase == phAcked && d.synced && handed[key]:
			return fmt.Errorf("%s (id %d), its ack synced, handed out again", key, d.id)
		case d.phase == phPutting && !kept && seen:
			return fmt.Errorf("%s, whose Put had not returned, is seen but cannot be handed out", key)
		case d.phase == phPutting && !kept:
			if err := q.Put(ctx, &webhook.Delivery{Key: key, Body: d.body}); err != nil {
				return fmt.Errorf("a repeat of %s, whose Put had not returned: %w", key, err)
			}
		case d.phase != phPutting && !seen:
			return fmt.Errorf("%s (phase %d) is not remembered as seen", key, d.phase)
		}
	}
	fresh := &webhook.Delivery{Key: "fresh", Body: []byte("{}")}
	if err := q.Put(ctx, fresh); err != nil {
		return fmt.Errorf("put after the open: %w", err)
	}
	if fresh.ID <= k.maxID || fresh.ID <= top {
		return fmt.Errorf("id %d given after the open; %d had been given before the cut, %d handed out since", fresh.ID, k.maxID, top)
	}
	if err := q.checkpointsMatch(ctx, k); err != nil {
		return err
	}
	// Drained, closed and opened again, the queue still gives higher ids.
	if err := drainAll(ctx, q); err != nil {
		return err
	}
	if err := q.Close(); err != nil {
		return err
	}
	q2, err := openOn(img, harnessDir, Options{}, sz)
	if err != nil {
		return fmt.Errorf("does not open again: %w", err)
	}
	q = q2
	again := &webhook.Delivery{Key: "again", Body: []byte("{}")}
	if err := q.Put(ctx, again); err != nil {
		return err
	}
	if again.ID <= fresh.ID {
		return fmt.Errorf("id %d given after a drain and a reopen; %d was given before", again.ID, fresh.ID)
	}
	return nil
}

// drainAll acks every delivery, deletes every dead letter, and lets the
// writer tidy the log.
func drainAll(ctx context.Context, q *Queue) error {
	for q.Len() > 0 {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, err := q.Take(tctx)
		cancel()
		if err == nil {
			err = q.Ack(ctx, d.ID)
		}
		if err != nil {
			return err
		}
	}
	dls, err := q.DeadLetters(ctx)
	for _, d := range dls {
		if err == nil {
			err = q.Delete(ctx, d.ID)
		}
	}
	q.flush()
	return err
}

// checkpointsMatch checks that each checkpoint reads as the last value set
// before the cut, or one being set.
func (q *Queue) checkpointsMatch(ctx context.Context, k *knowledge) error {
	for name, vals := range k.cps {
		v, _ := q.Checkpoint(ctx, name)
		if !containsBytes(vals, v) && (v != nil || k.set[name]) {
			return fmt.Errorf("checkpoint %s reads %q, not one of %q", name, v, vals)
		}
	}
	return nil
}

func containsBytes(vals [][]byte, v []byte) bool {
	for _, w := range vals {
		if bytes.Equal(w, v) {
			return true
		}
	}
	return false
}

// check checks that d, as the queue gives it, was stored by the workload,
// intact and under its id, in one of the phases given.
func (k *knowledge) check(d *webhook.Delivery, what string, phases ...phase) error {
	m := k.dels[d.Key]
	switch {
	case m == nil:
		return fmt.Errorf("%s: id %d, key %q, which was never stored (body %.60q)", what, d.ID, d.Key, d.Body)
	case !bytes.Equal(m.body, d.Body):
		return fmt.Errorf("%s: %s with a body that is not the one stored", what, d.Key)
	case m.id != 0 && m.id != d.ID:
		return fmt.Errorf("%s: %s under id %d, stored as %d", what, d.Key, d.ID, m.id)
	}
	for _, p := range phases {
		if m.phase == p {
			return nil
		}
	}
	return fmt.Errorf("%s: %s (id %d), in phase %d", what, d.Key, d.ID, m.phase)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
