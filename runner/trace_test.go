package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Faults the trace server can inject into one append.
const (
	faultNone       = ""
	fault502        = "502: nothing applied"
	faultApply502   = "applied, then 502"
	faultResetEarly = "connection reset mid-request, nothing applied"
	faultApplyReset = "applied, then connection reset"
	faultPrefix     = "a random prefix applied, then connection reset"
	fault416        = "416 at the current length"
	fault429        = "429"
)

// traceServer is a loopback server of PATCH /ci/api/v1/builds/1/trace.txt
// that applies the deployed server's rules and injects faults.
type traceServer struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	trace    []byte
	status   string
	rng      *rand.Rand
	pick     func(rng *rand.Rand) string // the fault for the next request
	counts   map[string]int
	requests int
	genuine  int // 416 answers to a wrong start
	gate     chan struct{}
	received chan int       // trace length after each request, when set
	ticks    chan time.Time // a tick after each injected fault, so the writer's next call follows
	check    func()         // runs under mu for every request
}

func newTraceServer(t *testing.T, seed uint64) *traceServer {
	t.Helper()
	s := &traceServer{t: t, status: "running", rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), counts: map[string]int{}}
	s.pick = func(*rand.Rand) string { return faultNone }
	s.ticks = make(chan time.Time, 1)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *traceServer) client(t *testing.T) *Client {
	t.Helper()
	c, err := NewClient(s.srv.URL, collab.WithHTTPClient(s.srv.Client()), collab.WithoutRetries(), collab.WithLogger(testLogger))
	require.NoError(t, err)
	return c
}

func (s *traceServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPatch || r.URL.Path != "/ci/api/v1/builds/1/trace.txt" {
		http.Error(w, `{"message":"404 Not found"}`, http.StatusNotFound)
		return
	}
	if g := s.gateChan(); g != nil {
		<-g
	}
	if r.Header.Get("BUILD-TOKEN") != testBuildToken || r.Header.Get("Content-Type") != "text/plain" {
		http.Error(w, `{"message":"403 Forbidden"}`, http.StatusForbidden)
		return
	}
	cr := r.Header.Get("Content-Range")
	a, b, ok := strings.Cut(cr, "-")
	start, err1 := strconv.ParseInt(a, 10, 64)
	end, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || strings.HasPrefix(cr, "bytes") {
		http.Error(w, `{"message":"400 (Bad request) Content-Range"}`, http.StatusBadRequest)
		return
	}

	s.mu.Lock()
	fault := s.pick(s.rng)
	var cut int
	if fault == faultResetEarly {
		cut = s.rng.IntN(1 << 12)
	}
	s.mu.Unlock()

	if fault != faultNone {
		defer s.tick()
	}
	if fault == faultResetEarly {
		_, _ = io.CopyN(io.Discard, r.Body, int64(cut))
		s.count(fault)
		s.hangUp(w)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away: apply nothing
	}
	if int64(len(body)) > 0 && end != start+int64(len(body))-1 {
		s.t.Errorf("Content-Range %q for %d bytes", cr, len(body))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.check != nil {
		s.check()
	}
	defer func() {
		if s.received != nil {
			s.received <- len(s.trace)
		}
	}()
	if start != int64(len(s.trace)) {
		s.genuine++
		s.reply416(w)
		return
	}
	s.counts[fault]++
	switch fault {
	case fault502:
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	case faultApply502:
		s.trace = append(s.trace, body...)
		http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
	case faultApplyReset:
		s.trace = append(s.trace, body...)
		s.hangUp(w)
	case faultPrefix:
		s.trace = append(s.trace, body[:s.rng.IntN(len(body)+1)]...)
		s.hangUp(w)
	case fault416:
		s.reply416(w)
	case fault429:
		w.Header().Set("Retry-After", "0")
		http.Error(w, `{"message":"429 Too Many Requests"}`, http.StatusTooManyRequests)
	default:
		s.trace = append(s.trace, body...)
		w.Header().Set("Build-Status", s.status)
		w.Header().Set("Range", "0-"+strconv.Itoa(len(s.trace)))
		w.WriteHeader(http.StatusAccepted)
	}
}

func (s *traceServer) reply416(w http.ResponseWriter) {
	w.Header().Set("Range", "0-"+strconv.Itoa(len(s.trace)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
	_, _ = io.WriteString(w, `{"error":"416 Range Not Satisfiable"}`)
}

// tick lets the writer make its next call after a failed one.
func (s *traceServer) tick() {
	select {
	case s.ticks <- time.Time{}:
	default:
	}
}

func (s *traceServer) count(fault string) {
	s.mu.Lock()
	s.counts[fault]++
	s.requests++
	s.mu.Unlock()
}

// hangUp closes the connection without an answer.
func (s *traceServer) hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

func (s *traceServer) gateChan() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gate
}

func (s *traceServer) snapshot() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.trace)
}

// never is a tick channel that never fires: sends happen on size and Close.
var never = make(chan time.Time)

// writeRandom writes total random bytes in pieces of 1..maxPiece and
// returns what Write accepted.
func writeRandom(t *testing.T, w io.Writer, rng *rand.Rand, total, maxPiece int) ([]byte, error) {
	t.Helper()
	var written []byte
	for len(written) < total {
		p := make([]byte, min(1+rng.IntN(maxPiece), total-len(written)))
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		n, err := w.Write(p)
		written = append(written, p[:n]...)
		if err != nil {
			return written, err
		}
		if n != len(p) {
			t.Fatalf("short write %d of %d without an error", n, len(p))
		}
	}
	return written, nil
}

func TestTraceWriterSurvivesFaults(t *testing.T) {
	faults := []string{fault502, faultApply502, faultResetEarly, faultApplyReset, faultPrefix, fault416, fault429, "mixed"}
	for i, fault := range faults {
		t.Run(fault, func(t *testing.T) {
			seed := uint64(1000 + i)
			s := newTraceServer(t, seed)
			s.pick = func(rng *rand.Rand) string {
				if rng.IntN(3) != 0 {
					return faultNone
				}
				if fault == "mixed" {
					return faults[rng.IntN(len(faults)-1)]
				}
				return fault
			}
			tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{
				FlushSize: 2 << 10, MaxBuffer: 16 << 10, tick: s.ticks, MaxFailures: -1,
			})
			written, err := writeRandom(t, tw, rand.New(rand.NewPCG(seed, 7)), 1<<20, 9000)
			require.NoError(t, err)
			require.NoError(t, tw.Close(), "seed %d", seed)

			got := s.snapshot()
			require.Equal(t, len(written), len(got), "seed %d: length", seed)
			require.True(t, bytes.Equal(written, got), "seed %d: the server's trace is exactly what was written", seed)
			assert.Equal(t, int64(len(written)), tw.Length())
			assert.Equal(t, collab.BuildRunning, tw.Status())
			s.mu.Lock()
			defer s.mu.Unlock()
			if fault == "mixed" {
				assert.Greater(t, len(s.counts), 5, "most kinds of fault were injected: %v", s.counts)
			} else {
				assert.Greater(t, s.counts[fault], 5, "the fault was injected")
			}
			switch fault {
			case faultApply502, faultApplyReset, faultPrefix, "mixed":
				assert.Positive(t, s.genuine, "a lost answer is followed by a 416 and a resync")
			}
		})
	}
}

// TestTraceWriterCancelMidStream writes a 10 MiB trace from one goroutine,
// with faults, while another cancels the context once the server holds
// 3 MiB. Precisely: Write then fails with context.Canceled; the server's
// trace is a prefix of the bytes Write accepted (so nothing is duplicated or
// reordered: the data is random), it holds at least every byte the writer
// saw acknowledged, and no goroutine outlives Close.
func TestTraceWriterCancelMidStream(t *testing.T) {
	const seed = 77
	s := newTraceServer(t, seed)
	s.pick = func(rng *rand.Rand) string {
		switch rng.IntN(8) {
		case 0:
			return faultApplyReset
		case 1:
			return faultApply502
		}
		return faultNone
	}
	s.received = make(chan int, 1<<16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for n := range s.received {
			if n >= 3<<20 {
				cancel()
				return
			}
		}
	}()
	tw := s.client(t).NewTraceWriter(ctx, 1, testBuildToken, TraceWriterOptions{
		FlushSize: 32 << 10, MaxBuffer: 256 << 10, tick: s.ticks, MaxFailures: -1,
	})
	var written []byte
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		written, werr = writeRandom(t, tw, rand.New(rand.NewPCG(seed, 1)), 10<<20, 64<<10)
	}()
	<-done
	require.ErrorIs(t, werr, context.Canceled, "Write reports the cancellation")
	cerr := tw.Close()
	require.ErrorIs(t, cerr, context.Canceled)
	_, err := tw.Write([]byte("more"))
	require.ErrorIs(t, err, context.Canceled)

	got := s.snapshot()
	assert.GreaterOrEqual(t, len(got), 3<<20, "progress before the cancel")
	assert.Less(t, len(written), 10<<20, "the cancel stopped the writer early")
	require.LessOrEqual(t, len(got), len(written))
	require.True(t, bytes.Equal(written[:len(got)], got), "the server holds a prefix of what was written, nothing duplicated")
	assert.LessOrEqual(t, tw.Length(), int64(len(got)), "every acknowledged byte is on the server")
}

func TestTraceWriterTickAndStatus(t *testing.T) {
	s := newTraceServer(t, 1)
	s.received = make(chan int, 16)
	tick := make(chan time.Time)
	var logs bytes.Buffer
	tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{
		tick: tick, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	assert.Empty(t, tw.Status())
	_, err := io.WriteString(tw, "$ make test\n")
	require.NoError(t, err)
	tick <- time.Now()
	assert.Equal(t, len("$ make test\n"), <-s.received, "a tick sends what is buffered")

	select {
	case <-tw.Canceled():
		t.Fatal("canceled before the server said so")
	default:
	}
	s.mu.Lock()
	s.status = "canceled"
	s.pick = func(rng *rand.Rand) string {
		if rng.IntN(2) == 0 {
			return fault502
		}
		return faultNone
	}
	s.mu.Unlock()
	_, err = io.WriteString(tw, "ok 1\n")
	require.NoError(t, err)
	tw.Flush()
	<-tw.Canceled()
	assert.Equal(t, collab.BuildCanceled, tw.Status())
	_, err = io.WriteString(tw, "killed\n")
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, tw.Close(), "Close is idempotent")
	assert.Equal(t, "$ make test\nok 1\nkilled\n", string(s.snapshot()))
	_, err = tw.Write([]byte("late"))
	assert.ErrorIs(t, err, ErrWriterClosed)
	assert.NotContains(t, logs.String(), testBuildToken)
}

func TestTraceWriterBackpressure(t *testing.T) {
	s := newTraceServer(t, 1)
	gate := make(chan struct{})
	s.gate = gate
	c := s.client(t)
	const maxBuffer = 16
	var tw *TraceWriter
	s.check = func() {
		tw.mu.Lock()
		defer tw.mu.Unlock()
		if len(tw.buf) > maxBuffer {
			t.Errorf("buffer grew to %d", len(tw.buf))
		}
	}
	tw = c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{FlushSize: 8, MaxBuffer: maxBuffer, tick: never})
	var accepted atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 64 {
			if _, err := tw.Write([]byte{byte('a' + i%26)}); err != nil {
				t.Error(err)
				return
			}
			accepted.Add(1)
		}
	}()
	for accepted.Load() < maxBuffer {
		runtime.Gosched()
	}
	for range 1000 {
		runtime.Gosched()
	}
	assert.Equal(t, int64(maxBuffer), accepted.Load(), "Write blocks once MaxBuffer bytes await acknowledgement")
	tw.mu.Lock()
	assert.Len(t, tw.buf, maxBuffer)
	tw.mu.Unlock()
	s.mu.Lock()
	s.gate = nil
	s.mu.Unlock()
	close(gate)
	<-done
	require.NoError(t, tw.Close())
	assert.Len(t, s.snapshot(), 64)
}

func TestTraceWriterDiverged(t *testing.T) {
	t.Run("server ahead of what was sent", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.trace = bytes.Repeat([]byte("x"), 100)
		tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: never})
		_, err := io.WriteString(tw, "0123456789")
		require.NoError(t, err)
		err = tw.Close()
		require.ErrorIs(t, err, ErrTraceDiverged)
		assert.ErrorContains(t, err, "server holds 100 bytes, only 10 were sent")
		assert.ErrorIs(t, tw.Err(), ErrTraceDiverged)
	})
	t.Run("server trace shrank", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.received = make(chan int, 4)
		tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: never})
		_, err := io.WriteString(tw, "0123456789")
		require.NoError(t, err)
		tw.Flush()
		<-s.received
		s.mu.Lock()
		s.trace = nil // a PUT with a trace replaced it
		s.mu.Unlock()
		_, err = io.WriteString(tw, "abc")
		require.NoError(t, err)
		err = tw.Close()
		assert.ErrorIs(t, err, ErrTraceDiverged)
		assert.ErrorContains(t, err, "shrank to 0 bytes, 10 were acknowledged")
	})
	t.Run("success with a length beyond the part", func(t *testing.T) {
		c, m := newMockClient(t)
		m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "0-99")
		tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: never})
		_, err := io.WriteString(tw, "abc")
		require.NoError(t, err)
		assert.ErrorIs(t, tw.Close(), ErrTraceDiverged)
	})
	t.Run("partial acknowledgement is resent", func(t *testing.T) {
		c, m := newMockClient(t)
		m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "0-2").
			Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "0-5")
		tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: never})
		_, err := io.WriteString(tw, "abcde")
		require.NoError(t, err)
		require.NoError(t, tw.Close())
		assert.Equal(t, "2-4", m.Last().Header.Get("Content-Range"))
		assert.Equal(t, "cde", string(m.Last().Body))
	})
	t.Run("malformed range is fatal", func(t *testing.T) {
		c, m := newMockClient(t)
		m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "zero to five")
		tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: never})
		_, err := io.WriteString(tw, "abcde")
		require.NoError(t, err)
		assert.ErrorContains(t, tw.Close(), "malformed range")
	})
}

func TestTraceWriterGivesUp(t *testing.T) {
	t.Run("failed calls in a row", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.pick = func(*rand.Rand) string { return fault502 }
		tick := make(chan time.Time)
		tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: tick, MaxFailures: 3})
		_, err := io.WriteString(tw, "lost cause")
		require.NoError(t, err)
		// Below FlushSize only ticks send: each makes one call, and the 502
		// of a PATCH is not retried.
		for range 3 {
			tick <- time.Time{}
		}
		err = tw.Close()
		assert.ErrorIs(t, err, collab.ErrServer)
		assert.ErrorContains(t, err, "trace append failed 3 times in a row")
		assert.Equal(t, 3, s.requests, "one call per tick")
		assert.Empty(t, s.snapshot())
	})
	t.Run("416 without progress is a failed call", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.pick = func(*rand.Rand) string { return fault416 }
		tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: s.ticks, MaxFailures: 2})
		_, err := io.WriteString(tw, "x")
		require.NoError(t, err)
		assert.ErrorIs(t, tw.Close(), collab.ErrRangeNotSatisfiable)
		assert.Equal(t, 2, s.requests)
	})
	t.Run("403 stops at once", func(t *testing.T) {
		s := newTraceServer(t, 1)
		tw := s.client(t).NewTraceWriter(context.Background(), 1, "wrong-token", TraceWriterOptions{tick: never, FlushSize: 4})
		_, _ = io.WriteString(tw, "0123456789")
		err := tw.Close()
		assert.ErrorIs(t, err, collab.ErrForbidden)
		_, err = tw.Write([]byte("x"))
		assert.ErrorIs(t, err, collab.ErrForbidden)
		assert.NotContains(t, err.Error(), "wrong-token")
	})
	t.Run("context ends the wait for the next tick", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.pick = func(*rand.Rand) string { return fault502 }
		s.received = make(chan int, 1)
		ctx, cancel := context.WithCancel(context.Background())
		tw := s.client(t).NewTraceWriter(ctx, 1, testBuildToken, TraceWriterOptions{tick: never, MaxFailures: -1})
		_, err := io.WriteString(tw, "x")
		require.NoError(t, err)
		tw.Flush()
		<-s.received
		cancel()
		assert.ErrorIs(t, tw.Close(), context.Canceled)
		assert.Equal(t, 1, s.requests)
	})
	t.Run("writes do not hasten the next call", func(t *testing.T) {
		s := newTraceServer(t, 1)
		s.pick = func(*rand.Rand) string { return fault502 }
		s.received = make(chan int, 1)
		tick := make(chan time.Time)
		tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: tick, FlushSize: 4, MaxBuffer: 128, MaxFailures: -1})
		_, err := io.WriteString(tw, "0123")
		require.NoError(t, err)
		<-s.received
		for range 20 {
			_, err = io.WriteString(tw, "more")
			require.NoError(t, err)
			tw.Flush()
		}
		tick <- time.Time{} // the writer was waiting for this tick: it makes one call
		<-s.received
		s.mu.Lock()
		s.pick = func(*rand.Rand) string { return faultNone }
		s.mu.Unlock()
		tick <- time.Time{}
		require.NoError(t, tw.Close())
		assert.Equal(t, 3, s.requests, "one call per tick after a failure, whatever was written")
		assert.Equal(t, "0123"+strings.Repeat("more", 20), string(s.snapshot()))
	})
}

func TestTraceWriterOptions(t *testing.T) {
	s := newTraceServer(t, 1)
	s.trace = []byte("earlier output\n")
	// Defaults: a real ticker, default sizes; resuming at the server's length.
	tw := s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{Offset: 15, FlushInterval: time.Hour})
	assert.Equal(t, DefaultFlushSize, tw.flushSize)
	assert.Equal(t, DefaultMaxBuffer, tw.maxBuffer)
	assert.Equal(t, DefaultMaxFailures, tw.maxFailures)
	_, err := io.WriteString(tw, "more\n")
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	assert.Equal(t, "earlier output\nmore\n", string(s.snapshot()))

	tw = s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{FlushSize: 100, MaxBuffer: 10})
	assert.Equal(t, 100, tw.maxBuffer, "MaxBuffer is at least FlushSize")
	require.NoError(t, tw.Close())

	//lint:ignore SA1012 a nil context is an error, not a panic
	tw = s.client(t).NewTraceWriter(nil, 1, testBuildToken, TraceWriterOptions{})
	_, err = tw.Write([]byte("x"))
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, "ctx: is nil")
	assert.Error(t, tw.Close())

	tw = s.client(t).NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{Offset: -1})
	_, err = tw.Write([]byte("x"))
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, "opts.Offset: is negative")
	assert.Error(t, tw.Close())
}

func TestTransient(t *testing.T) {
	assert.True(t, transient(&collab.RequestError{Err: io.ErrUnexpectedEOF}))
	assert.False(t, transient(&collab.RequestError{Err: context.Canceled}))
	assert.True(t, transient(&collab.ErrorResponse{StatusCode: 503}))
	assert.True(t, transient(&collab.ErrorResponse{StatusCode: 429}))
	assert.True(t, transient(&collab.ErrorResponse{StatusCode: 408}))
	assert.False(t, transient(&collab.ErrorResponse{StatusCode: 403}))
	assert.True(t, transient(&RangeError{Length: 3, Err: &collab.ErrorResponse{StatusCode: 416}}))
	assert.False(t, transient(&collab.ErrorResponse{StatusCode: 416}), "a 416 without a readable Range")
	assert.True(t, transient(errNoProgress))
	assert.False(t, transient(errors.New("other")))
}

// TestTraceWriterLogsRoute: every line the writer logs about its append call
// carries the call's method and route template, as the core's lines name a
// call, and no token.
func TestTraceWriterLogsRoute(t *testing.T) {
	s := newTraceServer(t, 1)
	calls := 0
	s.pick = func(*rand.Rand) string {
		if calls++; calls == 1 {
			return faultApply502 // applied, then lost: a failed call, then a resync
		}
		return faultNone
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := NewClient(s.srv.URL, collab.WithHTTPClient(s.srv.Client()), collab.WithoutRetries(), collab.WithLogger(logger))
	require.NoError(t, err)
	tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: s.ticks, Logger: logger})
	_, err = io.WriteString(tw, "abc")
	require.NoError(t, err)
	tw.Flush()
	require.NoError(t, tw.Close())
	assert.Equal(t, "abc", string(s.snapshot()))

	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	watched.Record(out)
	assert.NotContains(t, out, testBuildToken)
	writerLines := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		msg, _ := rec["msg"].(string)
		if strings.HasPrefix(msg, "runner: trace") {
			writerLines[msg] = rec
		}
	}
	require.Contains(t, writerLines, "runner: trace append failed; next call at the next tick")
	require.Contains(t, writerLines, "runner: trace resync")
	for msg, rec := range writerLines {
		assert.Equal(t, "/builds/:id/trace.txt", rec["route"], msg)
		assert.Equal(t, http.MethodPatch, rec["method"], msg)
		assert.EqualValues(t, 1, rec["build"], msg)
	}
}
