package runner

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceWriterCarries100MiB streams 100 MiB of log through a TraceWriter
// to a loopback server that hashes and discards it. The heap in use stays
// under 16 MiB of growth, every byte arrives once and in order, and the writer makes
// at most ceil(size/FlushSize)+2 requests, with the default sizes.
func TestTraceWriterCarries100MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 100 MiB")
	}
	const size, chunk = 100 << 20, DefaultFlushSize
	var mu sync.Mutex
	var length int64
	requests := 0
	sum := sha256.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start, _, _ := strings.Cut(r.Header.Get("Content-Range"), "-")
		from, _ := strconv.ParseInt(start, 10, 64)
		mu.Lock()
		defer mu.Unlock()
		requests++
		if from != length {
			w.Header().Set("Range", fmt.Sprintf("0-%d", length))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
			return
		}
		n, _ := io.Copy(sum, r.Body)
		length += n
		w.Header().Set("Build-Status", "running")
		w.Header().Set("Range", fmt.Sprintf("0-%d", length))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL)
	require.NoError(t, err)

	hs := newHeapSampler()
	tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: make(chan time.Time)}) // no timed flushes: sizes alone decide
	want := sha256.New()
	src := &genReader{n: size}
	buf := make([]byte, sampledChunk)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			want.Write(buf[:n])
			_, werr := tw.Write(buf[:n])
			require.NoError(t, werr)
			hs.add(n)
		}
		if err == io.EOF {
			break
		}
	}
	require.NoError(t, tw.Close())
	mu.Lock()
	defer mu.Unlock()
	assert.EqualValues(t, size, length)
	assert.Equal(t, want.Sum(nil), sum.Sum(nil), "the server holds exactly the bytes written")
	assert.LessOrEqual(t, requests, (size+chunk-1)/chunk+2, "trace requests")
	assert.Less(t, hs.peak(), uint64(heapLimit), "heap in use while streaming the trace")
	t.Logf("100 MiB trace: %d requests for %d chunks, peak heap growth %.1f MiB", requests, size/chunk, float64(hs.peak())/(1<<20))
}
