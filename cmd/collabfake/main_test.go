package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a bytes.Buffer safe to read while serve writes.
// wrote is signalled after every write, so the test waits without spinning.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestServeAnswersAndStopsCleanly(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{wrote: make(chan struct{}, 1)}
	done := make(chan error)
	go func() { done <- serve(ctx, addr, out) }()
	for !strings.Contains(out.String(), "admin private token") {
		<-out.wrote
	}
	token := strings.TrimSpace(strings.SplitN(out.String(), "admin private token: ", 2)[1])
	req, _ := http.NewRequest("GET", "http://"+addr+"/api/v3/projects", nil)
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	http.DefaultClient.CloseIdleConnections()
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "collabfake stopped")

	assert.Error(t, serve(context.Background(), "256.0.0.1:bad", out), "a bad address is an error")
}
