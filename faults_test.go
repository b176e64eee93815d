package collab

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedServer answers each request with the next fault of its script
// (the last one repeats) and counts requests per method.
type scriptedServer struct {
	*httptest.Server
	mu     sync.Mutex
	script []string
	seen   map[string]int
	stall  chan struct{}
}

func newScriptedServer(t *testing.T, script ...string) *scriptedServer {
	t.Helper()
	s := &scriptedServer{script: script, seen: map[string]int{}, stall: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		close(s.stall)
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

func (s *scriptedServer) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[method]
}

func (s *scriptedServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen[r.Method]++
	fault := s.script[0]
	if len(s.script) > 1 {
		s.script = s.script[1:]
	}
	s.mu.Unlock()
	hijack := func() (net.Conn, *bufio.ReadWriter) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		return conn, rw
	}
	switch fault {
	case "ok":
		w.Write([]byte(`{"id": 1, "title": "fine"}`))
	case "reset-before-headers":
		conn, _ := hijack()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	case "reset-after-headers":
		conn, rw := hijack()
		rw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\": 1, \"ti")
		rw.Flush()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	case "truncated-json":
		w.Write([]byte(`{"id": 1, "title": "cut off`))
	case "html-502":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>"))
	case "503-seconds":
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusServiceUnavailable)
	case "503-date":
		w.Header().Set("Retry-After", time.Now().Add(-time.Second).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusServiceUnavailable)
	case "429":
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"message":"429 Too Many Requests"}`))
	case "stall":
		select {
		case <-s.stall:
		case <-r.Context().Done():
		}
	case "huge-error":
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"message": "` + strings.Repeat("x", 1<<20) + `"}`))
	}
}

// TestFaultInjection runs every fault against a write (POST) and a read
// (GET) and checks the attempts made, the error's type, and that a write is
// never repeated after the server may have acted on it.
func TestFaultInjection(t *testing.T) {
	type want struct {
		attempts int
		errType  string // "", "request", "decode", "response"
		is       error
	}
	tests := []struct {
		script []string
		get    want
		post   want
	}{
		{[]string{"reset-before-headers"}, want{4, "request", nil}, want{1, "request", nil}},
		{[]string{"reset-after-headers"}, want{1, "decode", nil}, want{1, "decode", nil}},
		{[]string{"truncated-json"}, want{1, "decode", nil}, want{1, "decode", nil}},
		{[]string{"html-502"}, want{4, "response", ErrServer}, want{1, "response", ErrServer}},
		{[]string{"503-seconds", "ok"}, want{2, "", nil}, want{1, "response", ErrServer}},
		{[]string{"503-date", "ok"}, want{2, "", nil}, want{1, "response", ErrServer}},
		{[]string{"429", "429", "ok"}, want{3, "", nil}, want{3, "", nil}},
		{[]string{"429"}, want{4, "response", ErrTooManyRequests}, want{4, "response", ErrTooManyRequests}},
		{[]string{"huge-error"}, want{4, "response", ErrServer}, want{1, "response", ErrServer}},
	}
	for _, tt := range tests {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			w := tt.get
			if method == http.MethodPost {
				w = tt.post
			}
			t.Run(strings.Join(tt.script, ",")+"/"+method, func(t *testing.T) {
				srv := newScriptedServer(t, tt.script...)
				c, err := NewClient(srv.URL, WithPrivateToken(testToken), WithRetry(fastRetry), WithLogger(testLogger))
				require.NoError(t, err)
				is, _, err := do[Issue](context.Background(), c, method, route("projects/1/issues"), &encodeOptions{Title: Ptr("x")})
				assert.Equal(t, w.attempts, srv.count(method), "attempts")
				var re *RequestError
				var de *DecodeError
				var er *ErrorResponse
				switch w.errType {
				case "":
					require.NoError(t, err)
					assert.Equal(t, "fine", is.Title)
				case "request":
					assert.ErrorAs(t, err, &re)
				case "decode":
					assert.ErrorAs(t, err, &de)
				case "response":
					require.ErrorAs(t, err, &er)
					assert.ErrorIs(t, err, w.is)
					assert.LessOrEqual(t, len(er.Body), maxErrorBody)
					assert.LessOrEqual(t, len(er.Message), maxExcerpt+len("…"))
				}
			})
		}
	}
}

func TestFaultStallPastDeadline(t *testing.T) {
	srv := newScriptedServer(t, "stall")
	c, err := NewClient(srv.URL, WithRetry(fastRetry))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = send(ctx, c, http.MethodGet, route("projects"), nil, nil)
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
	assert.Equal(t, 1, srv.count(http.MethodGet), "a passed deadline is not retried")
}

// TestNoWriteRepeatedAfter5xx sends many writes through a server that fails
// every other one with a 5xx and checks each write reached it exactly once.
func TestNoWriteRepeatedAfter5xx(t *testing.T) {
	var mu sync.Mutex
	got := map[string]int{}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		mu.Lock()
		got[r.Form.Get("title")]++
		mu.Unlock()
		if n.Add(1)%2 == 0 {
			w.WriteHeader([]int{500, 502, 503, 504}[n.Load()/2%4])
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id": 1}`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithRetry(fastRetry))
	require.NoError(t, err)
	for i := 0; i < 40; i++ {
		for _, method := range []string{http.MethodPost, http.MethodPatch} {
			_, _ = send(context.Background(), c, method, route("projects/1/issues"), &encodeOptions{Title: Ptr(method + strings.Repeat("i", i+1))}, nil)
		}
	}
	for title, count := range got {
		assert.Equal(t, 1, count, "%s was written %d times", title, count)
	}
	assert.Len(t, got, 80)
}
