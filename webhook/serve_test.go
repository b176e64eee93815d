package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewServerTimeouts(t *testing.T) {
	srv := NewServer(":8080", http.NotFoundHandler())
	assert.Equal(t, ":8080", srv.Addr)
	assert.LessOrEqual(t, srv.ReadHeaderTimeout, SenderTimeout)
	assert.LessOrEqual(t, srv.ReadTimeout, SenderTimeout)
	assert.Greater(t, srv.WriteTimeout, srv.ReadTimeout+DefaultStoreTimeout, "room to read, store and answer")
	assert.NotZero(t, srv.IdleTimeout)
}

// closedWithin dials a server from NewServer, sends head, then one byte of
// more every 200 ms, and reports how long the server took to close.
func closedWithin(t *testing.T, addr, head, more string) time.Duration {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	start := time.Now()
	_, err = io.WriteString(c, head)
	require.NoError(t, err)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_, _ = io.Copy(io.Discard, c)
	}()
	for i := 0; ; i++ {
		select {
		case <-closed:
			return time.Since(start)
		case <-time.After(200 * time.Millisecond):
			if time.Since(start) > 2*SenderTimeout {
				t.Fatal("the slow connection is still open")
			}
			_, _ = io.WriteString(c, more[i%len(more):i%len(more)+1])
		}
	}
}

// TestSlowClientsAreClosed: connections whose headers or body trickle in
// are closed by the read timeouts, within the sender's own wait.
func TestSlowClientsAreClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the server's timeouts")
	}
	h := newHandler(t, Options{OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer("", h)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	t.Run("headers", func(t *testing.T) {
		t.Parallel()
		took := closedWithin(t, addr, "POST /hook HTTP/1.1\r\nHost: x\r\n", "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaa\r\n")
		t.Logf("slow headers closed after %v", took)
		assert.Less(t, took, ReadHeaderTimeout+time.Second)
	})
	t.Run("body", func(t *testing.T) {
		t.Parallel()
		took := closedWithin(t, addr, "POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Gitlab-Event: Issue Hook\r\nContent-Length: 100000\r\n\r\n{", " ")
		t.Logf("slow body closed after %v", took)
		assert.Less(t, took, ReadTimeout+time.Second)
	})
}

// TestServeStopsInOrder: when Serve's context ends, a delivery arriving
// during the stop is closed without an answer (not refused), the store in
// flight is answered 200, and Serve returns nil.
func TestServeStopsInOrder(t *testing.T) {
	q := newStallQueue()
	defer q.Close()
	h := newHandler(t, Options{Queue: q, OnIssue: func(context.Context, *IssueEvent) error { return nil }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, ln, h) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	var hs Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&hs))
	resp.Body.Close()
	assert.True(t, hs.Ready, "%+v", hs)

	post := func(id int) (int, error) {
		body := bytes.Replace(readFile(t, "spec/issue.json"), []byte(`"id":4417`), []byte(fmt.Sprintf(`"id":%d`, id)), 1)
		req, _ := http.NewRequest(http.MethodPost, base+"/hook", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderEvent, string(KindIssue))
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	first := make(chan int, 1)
	go func() { code, _ := post(1); first <- code }()
	<-q.entered
	cancel()
	require.Eventually(t, h.stopping, 10*time.Second, time.Millisecond)
	_, err = post(2)
	require.Error(t, err)
	assert.ErrorIs(t, err, io.EOF, "asked again, not refused")
	close(q.release)
	assert.Equal(t, http.StatusOK, <-first)
	require.NoError(t, <-served)
	_, err = post(3)
	assert.Error(t, err, "the server is down after Serve returned")
	st := h.Stats()
	assert.Equal(t, int64(1), st.Accepted)
	assert.Equal(t, int64(1), st.AskedAgain)
}
