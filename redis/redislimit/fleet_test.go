package redislimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redislimit"
	"github.com/redis/go-redis/v9"
)

// fleetEnv, when set, makes the test binary a worker of the fleet: it reads
// its orders from the variable, runs them and prints its tally as JSON.
const fleetEnv = "REDISLIMIT_FLEET_WORKER"

func TestMain(m *testing.M) {
	if orders := os.Getenv(fleetEnv); orders != "" {
		os.Exit(runWorker(orders))
	}
	os.Exit(m.Run())
}

// orders tell one worker process what to do.
type orders struct {
	URL, Token, Redis string  // Redis "" means no shared limiter
	Rate              float64 // the shared budget, or each process's own limit
	Goroutines        int
	Project, Issue    int
	Start             time.Time // when to begin, the same for every process
	Duration          time.Duration
}

// tally is what a worker did.
type tally struct {
	Calls, Notes, Failed int
}

// runWorker makes calls from many goroutines until the end of the window:
// three project reads for each note created.
func runWorker(raw string) int {
	var o orders
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := []collab.ClientOption{collab.WithPrivateToken(o.Token)}
	if o.Redis != "" {
		rdb := redis.NewClient(&redis.Options{Addr: o.Redis, PoolSize: o.Goroutines})
		defer rdb.Close()
		lim, err := redislimit.New(rdb, o.Token, redislimit.Options{Rate: o.Rate})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		opts = append(opts, collab.WithSharedLimiter(lim))
	} else {
		opts = append(opts, collab.WithRateLimit(o.Rate, 1))
	}
	tr := collab.NewTransport()
	tr.MaxIdleConnsPerHost = o.Goroutines
	c, err := collab.NewClient(o.URL, append(opts, collab.WithHTTPClient(&http.Client{Transport: tr}))...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer c.Close()
	time.Sleep(time.Until(o.Start))
	ctx, cancel := context.WithDeadline(context.Background(), o.Start.Add(o.Duration))
	defer cancel()
	var calls, notes, failed atomic.Int64
	var wg sync.WaitGroup
	for g := range o.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; ctx.Err() == nil; i++ {
				var err error
				if i%4 == 3 {
					_, _, err = c.Notes.CreateIssueNote(ctx, o.Project, o.Issue, &collab.CreateNoteOptions{Body: "fleet note"})
					if err == nil {
						notes.Add(1)
					}
				} else {
					_, _, err = c.Projects.Get(ctx, o.Project)
				}
				switch {
				case err == nil:
					calls.Add(1)
				case !errors.Is(err, context.DeadlineExceeded):
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	out, _ := json.Marshal(tally{int(calls.Load()), int(notes.Load()), int(failed.Load())})
	fmt.Println(string(out))
	return 0
}

// fleetResult is one run of the fleet, from the fake's request log.
type fleetResult struct {
	answered, tooMany int // requests answered in the window, and of them 429s
	budgetUsed        float64
	notesMade         int // notes the workers saw created
	notesStored       int // notes the fake holds
	failed            int
}

// runFleet runs processes workers of goroutines each against a fake that
// allows limit requests per second per token, for d, and reads the outcome
// from the fake's request log. With a sharedRate the workers share that
// budget in Redis; without, each limits itself to limit.
func runFleet(tb testing.TB, processes, goroutines int, limit float64, d time.Duration, sharedRate float64) fleetResult {
	fake := collabtest.NewTestServer(tb, collabtest.WithRateLimit(limit, 10))
	project := fake.Seed.Project(fake.Admin, "fleet", collab.PrivateVisibility)
	pid := project.ID
	issue := fake.Seed.Issue(project, fake.Admin, "notes go here").ID
	o := orders{URL: fake.URL, Token: fake.AdminToken, Rate: limit, Goroutines: goroutines, Project: pid, Issue: issue,
		Start: time.Now().Add(2 * time.Second), Duration: d}
	if sharedRate > 0 {
		o.Redis, o.Rate = redistest.Start(tb, false).Addr(), sharedRate
	}
	raw, _ := json.Marshal(o)
	var res fleetResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range processes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fleetEnv+"="+string(raw))
			out, err := cmd.Output()
			var t tally
			if err == nil {
				err = json.Unmarshal(out, &t)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				tb.Errorf("worker: %v: %s", err, out)
			}
			res.notesMade += t.Notes
			res.failed += t.Failed
		}()
	}
	wg.Wait()
	end := o.Start.Add(d)
	for _, r := range fake.Requests() {
		if r.Time.Before(o.Start) || r.Time.After(end) {
			continue
		}
		res.answered++
		if r.Status == http.StatusTooManyRequests {
			res.tooMany++
		}
	}
	res.budgetUsed = float64(res.answered-res.tooMany) / (limit * d.Seconds())
	fake.SetRateLimit(0, 0)
	admin, err := collab.NewClient(fake.URL, collab.WithPrivateToken(fake.AdminToken))
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	for _, err := range admin.Notes.AllIssueNotes(context.Background(), pid, issue, nil) {
		if err != nil {
			tb.Fatal(err)
		}
		res.notesStored++
	}
	return res
}

// BenchmarkFleet: 4 processes of 16 goroutines share one token against a
// fake that allows 50 requests a second per token. "shared" takes every
// request from one budget in Redis; "shared-over" does too, with a budget
// set twice too high, which only the shared rate's cuts after each 429 bring
// down; "local" gives each process its own limit of 50 a second, as
// processes that know nothing of each other would.
// Each run lasts 5 s; the metrics are the share of answers that were 429,
// the share of the budget used by answers that were not, and notes created
// twice (notes stored minus notes the workers saw created).
func BenchmarkFleet(b *testing.B) {
	for _, mode := range []struct {
		name       string
		sharedRate float64
	}{{"shared", 50}, {"shared-over", 100}, {"local", 0}} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				r := runFleet(b, 4, 16, 50, 5*time.Second, mode.sharedRate)
				b.ReportMetric(100*float64(r.tooMany)/float64(max(r.answered, 1)), "429-%")
				b.ReportMetric(100*r.budgetUsed, "budget-%")
				b.ReportMetric(float64(r.notesStored-r.notesMade), "dup-notes")
				b.ReportMetric(float64(r.answered), "answers")
				b.ReportMetric(float64(r.failed), "failed-calls")
				if r.notesStored != r.notesMade {
					b.Errorf("%d notes stored, %d seen created: a POST was repeated", r.notesStored, r.notesMade)
				}
				if mode.name == "shared" && (r.tooMany*100 > r.answered || r.budgetUsed < 0.9) {
					b.Errorf("shared budget: %d of %d answers were 429, %.0f%% of the budget used", r.tooMany, r.answered, 100*r.budgetUsed)
				}
			}
		})
	}
}
