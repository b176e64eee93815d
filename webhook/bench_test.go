package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// sendersPerCPU is how many deliveries the benchmark keeps in flight per
// CPU: a disk queue commits the deliveries waiting together, so its rate
// grows with the senders while the floor's does not.
var sendersPerCPU = flag.Int("senders-per-cpu", 16, "deliveries in flight per CPU in BenchmarkDeliveries")

// BenchmarkDeliveries measures deliveries answered per second over loopback,
// many at once, by a real http.Server: the floor, a plain handler that reads
// the body, decodes it with encoding/json into standard-typed structs and
// answers 200; read, a handler that only reads the body; then the Handler
// on each queue, with a callback that does nothing, timed until every
// callback ran. Compare the deliveries/s of one run.
func BenchmarkDeliveries(b *testing.B) {
	template, err := os.ReadFile("testdata/spec/issue.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		deliver(b, template, http.HandlerFunc(floorHandler), nil)
	})
	b.Run("read", func(b *testing.B) {
		deliver(b, template, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		}), nil)
	})
	raw := webhook.Options{OnDelivery: func(context.Context, *webhook.Delivery) error { return nil }}
	typed := webhook.Options{OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }}
	for _, o := range []struct {
		name string
		opts webhook.Options
	}{{"", raw}, {"-typed", typed}} {
		b.Run("memory"+o.name, func(b *testing.B) {
			benchHandler(b, template, webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}), o.opts)
		})
		b.Run("disk"+o.name, func(b *testing.B) {
			q, err := diskqueue.Open(b.TempDir(), diskqueue.Options{})
			if err != nil {
				b.Fatal(err)
			}
			benchHandler(b, template, q, o.opts)
		})
	}
}

// floorHandler is a receiver written with net/http and encoding/json
// alone: it reads the issue event into floorIssue and answers 200, or 400
// when the body does not decode.
func floorHandler(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, reflect.New(floorIssue).Interface())
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// floorIssue is the issue event as a program using encoding/json alone
// would declare it: webhook.IssueEvent's keys, with standard types. It is
// built from the event type rather than written again, so that the floor
// reads every key the event has; TestFloorDecodesEveryKey checks that it
// has a field for every key sent.
var floorIssue = floorType(reflect.TypeFor[webhook.IssueEvent]())

// floorType is the standard-typed twin of t: the same fields and tags, with
// strings for times (time.Time cannot decode "2016-06-21 09:14:07 UTC") and
// named strings, the basic kinds for other named types, so that nothing
// decodes with the SDK's code; Extra is left out.
func floorType(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(floorType(t.Elem()))
	case reflect.Slice:
		return reflect.SliceOf(floorType(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(floorType(t.Key()), floorType(t.Elem()))
	case reflect.Interface:
		return t
	case reflect.Struct:
		if t == reflect.TypeFor[collab.Time]() {
			return reflect.TypeFor[string]()
		}
		return reflect.StructOf(floorFields(t))
	}
	return reflect.Zero(t).Convert(basicTypes[t.Kind()]).Type()
}

// floorFields are the fields of struct t as floorType makes them, those of
// embedded structs included.
func floorFields(t reflect.Type) []reflect.StructField {
	var fields []reflect.StructField
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Anonymous:
			fields = append(fields, floorFields(f.Type)...)
		case f.Name != "Extra":
			fields = append(fields, reflect.StructField{Name: f.Name, Type: floorType(f.Type), Tag: f.Tag})
		}
	}
	return fields
}

var basicTypes = map[reflect.Kind]reflect.Type{
	reflect.String: reflect.TypeFor[string](), reflect.Int: reflect.TypeFor[int](), reflect.Bool: reflect.TypeFor[bool](),
	reflect.Float64: reflect.TypeFor[float64](), reflect.Int64: reflect.TypeFor[int64](),
}

// floorValue is the value at the field path names of a decoded floorIssue,
// through pointers.
func floorValue(v reflect.Value, names ...string) any {
	for _, n := range names {
		v = reflect.Indirect(v).FieldByName(n)
	}
	return reflect.Indirect(v).Interface()
}

// TestFloorDecodesEveryKey checks that BenchmarkDeliveries' floor does the
// work a receiver does: it decodes every key of the delivery, and reads the
// values the Handler's typed decoder reads.
func TestFloorDecodesEveryKey(t *testing.T) {
	template, err := os.ReadFile("testdata/spec/issue.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(template))
	dec.DisallowUnknownFields()
	ev := reflect.New(floorIssue)
	if err := dec.Decode(ev.Interface()); err != nil {
		t.Fatal(err)
	}
	typed, err := webhook.ParsePayload(http.Header{webhook.HeaderEvent: {string(webhook.KindIssue)}}, template)
	if err != nil {
		t.Fatal(err)
	}
	issue := typed.(*webhook.IssueEvent)
	for _, c := range []struct {
		path []string
		want any
	}{
		{[]string{"ObjectAttributes", "ID"}, issue.ObjectAttributes.ID},
		{[]string{"ObjectAttributes", "Title"}, issue.ObjectAttributes.Title},
		{[]string{"ObjectAttributes", "State"}, string(issue.ObjectAttributes.State)},
		{[]string{"Project", "PathWithNamespace"}, issue.Project.PathWithNamespace},
		{[]string{"Assignee", "Username"}, issue.Assignee.Username},
		{[]string{"ObjectAttributes", "CreatedAt"}, "2016-06-21 09:14:07 UTC"},
	} {
		if got := floorValue(ev, c.path...); got != c.want {
			t.Errorf("the floor read %v as %#v, want %#v", c.path, got, c.want)
		}
	}
	rec := httptest.NewRecorder()
	floorHandler(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(template[:len(template)/2])))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("a cut body: %d, want 400", rec.Code)
	}
}

func benchHandler(b *testing.B, template []byte, q webhook.Queue, opts webhook.Options) {
	defer q.Close()
	opts.Queue = q
	h, err := webhook.NewHandler(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	deliver(b, template, h, func() {
		if err := h.WaitIdle(ctx); err != nil {
			b.Fatal(err)
		}
	})
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// deliver posts b.N distinct issue deliveries to h, -senders-per-cpu per CPU
// at a time, and then waits for handled, when given, within the timing: a
// queue that answers fast but leaves its callbacks behind shows it.
func deliver(b *testing.B, template []byte, h http.Handler, handled func()) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	b.SetParallelism(*sendersPerCPU)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := post(client, srv.URL, template, next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if handled != nil {
		handled()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	// On a shared machine the wall clock varies with the neighbours' load;
	// the CPU time this process spent per delivery (sender included) varies
	// less.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/delivery")
}

// post posts the issue delivery of template with the given issue id to
// url, and expects a 200.
func post(client *http.Client, url string, template []byte, id int64) error {
	body := bytes.Replace(template, []byte(`"id":4417`), fmt.Appendf(nil, `"id":%d`, id), 1)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	return nil
}

// cpuTime returns the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backlogSize is how many deliveries BenchmarkBacklog stores before it lets
// them drain.
const backlogSize = 20000

// BenchmarkBacklog stores backlogSize deliveries over loopback while the
// callback is blocked, -senders-per-cpu per CPU at a time, then releases
// the callback and lets as many workers drain them. It reports the store's
// and the drain's rates, and the rate of the drain's last third over its
// first third: a queue whose cost grows with what it holds, or with what
// it has freed, shows below 1. disk-reopened closes the queue once the
// deliveries are stored and drains them from a queue opened again, as
// after a restart: none is then held in memory.
func BenchmarkBacklog(b *testing.B) {
	template, err := os.ReadFile("testdata/spec/issue.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("memory", func(b *testing.B) {
		backlog(b, template, func() webhook.Queue { return webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}) }, nil)
	})
	openDisk := func(b *testing.B, dir string) webhook.Queue {
		q, err := diskqueue.Open(dir, diskqueue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return q
	}
	b.Run("disk", func(b *testing.B) {
		backlog(b, template, func() webhook.Queue { return openDisk(b, b.TempDir()) }, nil)
	})
	b.Run("disk-reopened", func(b *testing.B) {
		var dir string
		backlog(b, template, func() webhook.Queue {
			dir = b.TempDir()
			return openDisk(b, dir)
		}, func(q webhook.Queue) webhook.Queue {
			if err := q.Close(); err != nil {
				b.Fatal(err)
			}
			return openDisk(b, dir)
		})
	})
}

func backlog(b *testing.B, template []byte, open func() webhook.Queue, reopen func(webhook.Queue) webhook.Queue) {
	var store, drain, ratio float64
	for range b.N {
		s, d, r := backlogOnce(b, template, open(), reopen)
		store, drain, ratio = store+s, drain+d, ratio+r
	}
	n := float64(b.N)
	b.ReportMetric(store/n, "stored/s")
	b.ReportMetric(drain/n, "drained/s")
	b.ReportMetric(ratio/n, "last/first-third")
	b.ReportMetric(0, "ns/op")
}

// backlogOnce runs one store and drain on q and returns the store's rate,
// the drain's, and its last third's rate over its first third's. With
// reopen, the deliveries are stored without workers, and drained from the
// queue reopen returns for q.
func backlogOnce(b *testing.B, template []byte, q webhook.Queue, reopen func(webhook.Queue) webhook.Queue) (store, drain, ratio float64) {
	release := make(chan struct{})
	var handled atomic.Int64
	var thirds [4]time.Time // the drain's start, and when each third was handled
	workers := *sendersPerCPU * runtime.GOMAXPROCS(0)
	handler := func(q webhook.Queue) *webhook.Handler {
		h, err := webhook.NewHandler(webhook.Options{Queue: q, Workers: workers, OnIssue: func(context.Context, *webhook.IssueEvent) error {
			<-release
			if n := handled.Add(1); n%(backlogSize/3) == 0 && n <= backlogSize {
				thirds[n/(backlogSize/3)] = time.Now()
			}
			return nil
		}})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	run := func(h *webhook.Handler) { go func() { done <- h.Run(ctx) }() }
	h := handler(q)
	if reopen == nil {
		run(h)
	}
	srv := httptest.NewServer(h)
	start := time.Now()
	postAll(b, srv.URL, template, backlogSize, workers)
	stored := time.Now()
	srv.Close()
	if reopen != nil {
		q = reopen(q)
		h = handler(q)
		run(h)
	}
	defer q.Close()
	thirds[0] = time.Now()
	close(release)
	idle, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := h.WaitIdle(idle); err != nil {
		b.Fatal(err)
	}
	drained := time.Now()
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	third := float64(backlogSize / 3)
	return backlogSize / stored.Sub(start).Seconds(), backlogSize / drained.Sub(thirds[0]).Seconds(),
		(third / thirds[3].Sub(thirds[2]).Seconds()) / (third / thirds[1].Sub(thirds[0]).Seconds())
}

// postAll posts n distinct issue deliveries to url, senders at a time.
func postAll(b *testing.B, url string, template []byte, n, senders int) {
	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if err := post(client, url, template, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
