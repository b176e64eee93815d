package runner

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	bigSize      = 256 << 20
	heapLimit    = 16 << 20
	sampleEvery  = 8 << 20
	sampledChunk = 32 << 10
)

// genReader generates n deterministic, non-repeating-looking bytes on the fly.
type genReader struct {
	n, off int64
	state  uint64
}

func (g *genReader) Read(p []byte) (int, error) {
	if g.off >= g.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), g.n-g.off)]
	var word [8]byte
	for i := 0; i < len(p); i += 8 {
		g.state = g.state*6364136223846793005 + 1442695040888963407
		binary.LittleEndian.PutUint64(word[:], g.state)
		copy(p[i:], word[:])
	}
	g.off += int64(len(p))
	return len(p), nil
}

// heapSampler records the largest HeapInuse seen at its sample points;
// peak is its growth over the heap in use when the sampler was made (after
// a GC), so what the rest of the test binary holds does not count.
type heapSampler struct {
	mu   sync.Mutex
	base uint64
	max  uint64
	seen int64
	next int64
}

func newHeapSampler() *heapSampler {
	runtime.GC()
	h := &heapSampler{}
	h.sample()
	h.base = h.max
	return h
}

func (h *heapSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.mu.Lock()
	h.max = max(h.max, ms.HeapInuse)
	h.mu.Unlock()
}

// add counts transferred bytes and samples every sampleEvery bytes.
func (h *heapSampler) add(n int) {
	h.seen += int64(n)
	if h.seen >= h.next {
		h.next += sampleEvery
		h.sample()
	}
}

func (h *heapSampler) peak() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.max - h.base
}

// sampledHasher hashes what it is given and samples the heap as it goes.
type sampledHasher struct {
	h hash.Hash
	s *heapSampler
}

func (w *sampledHasher) Write(p []byte) (int, error) {
	w.s.add(len(p))
	return w.h.Write(p)
}

func sumOf(r io.Reader) []byte {
	h := sha256.New()
	_, _ = io.Copy(h, r)
	return h.Sum(nil)
}

func TestUploadArtifactsStreams256MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB")
	}
	want := sumOf(&genReader{n: bigSize, state: 1})
	hs := newHeapSampler()
	var got []byte
	var size int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ci/api/v1/builds/7/artifacts" || r.Header.Get("BUILD-TOKEN") != testBuildToken {
			http.Error(w, `{"message":"403 Forbidden"}`, http.StatusForbidden)
			return
		}
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		require.NoError(t, err)
		part, err := multipart.NewReader(r.Body, params["boundary"]).NextPart()
		require.NoError(t, err)
		assert.Equal(t, "file", part.FormName())
		assert.Equal(t, "artifacts.zip", part.FileName())
		sh := &sampledHasher{h: sha256.New(), s: hs}
		size, err = io.CopyBuffer(sh, part, make([]byte, sampledChunk))
		require.NoError(t, err)
		got = sh.h.Sum(nil)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id": 7, "status": "running", "artifacts_file": {"filename": "artifacts.zip", "size": `+strconv.Itoa(bigSize)+`}}`)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()))
	require.NoError(t, err)

	b, err := c.UploadArtifacts(context.Background(), 7, testBuildToken, "artifacts.zip", &genReader{n: bigSize, state: 1}, &UploadArtifactsOptions{ExpireIn: "1 week"})
	require.NoError(t, err)
	assert.Equal(t, int64(bigSize), b.ArtifactsFile.Size)
	assert.Equal(t, int64(bigSize), size)
	assert.Equal(t, want, got, "the server received every byte, in order")
	assert.Less(t, hs.peak(), uint64(heapLimit), "heap in use during the upload")
	t.Logf("peak heap growth during a 256 MiB upload: %.1f MiB", float64(hs.peak())/(1<<20))
}

func TestDownloadArtifactsStreams256MiB(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB")
	}
	want := sumOf(&genReader{n: bigSize, state: 2})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ci/api/v1/builds/7/artifacts" || r.Header.Get("BUILD-TOKEN") != testBuildToken {
			http.Error(w, `{"message":"403 Forbidden"}`, http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", "attachment; filename=artifacts.zip")
		w.Header().Set("Content-Length", strconv.Itoa(bigSize))
		_, _ = io.CopyBuffer(w, &genReader{n: bigSize, state: 2}, make([]byte, sampledChunk))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()))
	require.NoError(t, err)

	hs := newHeapSampler()
	sh := &sampledHasher{h: sha256.New(), s: hs}
	n, err := c.DownloadArtifacts(context.Background(), 7, testBuildToken, sh)
	require.NoError(t, err)
	assert.Equal(t, int64(bigSize), n)
	assert.Equal(t, want, sh.h.Sum(nil))
	assert.Less(t, hs.peak(), uint64(heapLimit), "heap in use during the download")
	t.Logf("peak heap growth during a 256 MiB download: %.1f MiB", float64(hs.peak())/(1<<20))
}

// blockingServer accepts an upload, reads a little of it and then waits
// until the test releases it, so the client is stuck mid-upload.
func TestUploadArtifactsCancelMidUpload(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.CopyN(io.Discard, r.Body, 1<<20)
		close(started)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	for _, r := range []io.Reader{&genReader{n: bigSize}, onlyReader{&genReader{n: bigSize}}} {
		_, err = c.UploadArtifacts(ctx, 7, testBuildToken, "artifacts.zip", r, nil)
		require.ErrorIs(t, err, context.Canceled)
	}
	// goleak in TestMain proves the copying goroutines ended.
}

// TestDownloadRedirectDropsToken follows a 302 to storage on another host
// without sending the build token there.
func TestDownloadRedirectDropsToken(t *testing.T) {
	var storageToken, storagePrivate string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storageToken, storagePrivate = r.Header.Get("BUILD-TOKEN"), r.Header.Get("PRIVATE-TOKEN")
		_, _ = io.WriteString(w, "zipbytes")
	}))
	defer storage.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("BUILD-TOKEN") != testBuildToken {
			http.Error(w, "no token", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/ci/api/v1/builds/7/artifacts" {
			http.Redirect(w, r, "/storage/7", http.StatusFound) // same host: token kept
			return
		}
		http.Redirect(w, r, storage.URL+"/bucket/7.zip", http.StatusFound)
	}))
	defer api.Close()
	// A plain client: the root package strips the tokens for any client.
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	c, err := NewClient(api.URL, collab.WithPrivateToken("ptok-admin"), collab.WithHTTPClient(hc))
	require.NoError(t, err)
	var buf writerFunc = func(p []byte) (int, error) { return len(p), nil }
	n, err := c.DownloadArtifacts(context.Background(), 7, testBuildToken, buf)
	require.NoError(t, err)
	assert.Equal(t, int64(8), n)
	assert.Empty(t, storageToken, "BUILD-TOKEN is not sent to another host")
	assert.Empty(t, storagePrivate, "PRIVATE-TOKEN is not sent to another host")

	// A redirect loop stops.
	loop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	}))
	defer loop.Close()
	var attempts atomic.Int64
	counting := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/ci/api/v1/builds/7/artifacts" {
			attempts.Add(1)
		}
		return hc.Transport.RoundTrip(r)
	})}
	c, err = NewClient(loop.URL, collab.WithHTTPClient(counting), collab.WithRetry(collab.RetryPolicy{MaxRetries: 3, MinWait: time.Millisecond, MaxWait: time.Millisecond}))
	require.NoError(t, err)
	_, err = c.DownloadArtifacts(context.Background(), 7, testBuildToken, buf)
	assert.ErrorContains(t, err, "stopped after 10 redirects")
	assert.EqualValues(t, 1, attempts.Load(), "a refused redirect is not retried")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
