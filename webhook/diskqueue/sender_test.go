package diskqueue

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/collabsvc/collab/webhook"
)

// sender delivers issues as the server does: a 2xx ends a delivery; a 4xx
// or 5xx answer, a refused or reset connection are final; any other
// failure (no answer within 10 s, a connection closed without an answer)
// is tried again, up to 25 times, on a schedule shortened to milliseconds.
type sender struct {
	url      string
	client   *http.Client
	template []byte

	mu                      sync.Mutex
	answered, asked, finals int
}

func newSender(t *testing.T, url string) *sender {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: webhook.SenderTimeout}
	t.Cleanup(c.CloseIdleConnections)
	return &sender{url: url, client: c, template: readFile(t, "spec/issue.json")}
}

// deliver sends issue id until it ends.
func (s *sender) deliver(id int) {
	for attempt := 0; attempt <= 25; attempt++ {
		code, err := s.post(issueBody(s.template, id))
		s.mu.Lock()
		switch {
		case err == nil && code < 300:
			s.answered++
		case err == nil || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET):
			s.finals++
		default:
			s.asked++
			s.mu.Unlock()
			time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond)
			continue
		}
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.finals++ // gave up
	s.mu.Unlock()
}

func (s *sender) post(body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// deliverAll sends issues 1..n from conc goroutines, and calls midway once
// half of them ended.
func (s *sender) deliverAll(n, conc int, midway func()) {
	ids := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				s.deliver(id)
			}
		}()
	}
	for id := 1; id <= n; id++ {
		if id == n/2 && midway != nil {
			midway()
		}
		ids <- id
	}
	close(ids)
	wg.Wait()
}

// handledLog counts the handlings of each issue.
type handledLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (l *handledLog) record(ctx context.Context, _ *webhook.IssueEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == nil {
		l.n = map[string]int{}
	}
	l.n[webhook.DeliveryFrom(ctx).StateKey]++
	return nil
}

// report prints the counts of a fault test and checks that no event was
// lost and none got a final answer.
func (s *sender) report(t *testing.T, name string, n int, l *handledLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	handled, twice, lost := 0, 0, 0
	for id := 1; id <= n; id++ {
		switch c := l.n[issueKey(id)]; {
		case c == 0:
			lost++
		case c > 1:
			twice++
			fallthrough
		default:
			handled++
		}
	}
	t.Logf("%s: sent %d; answered 200 %d; asked again %d; final answers %d; handled %d; handled twice %d; lost %d",
		name, n, s.answered, s.asked, s.finals, handled, twice, lost)
	assert.Zero(t, lost, "lost")
	assert.Zero(t, s.finals, "final answers")
	assert.Equal(t, n, s.answered, "each delivery ends answered 200")
}

// handoff is a listening socket handed from one server to the next, as
// socket activation does across a restart: connections wait in it while
// no server accepts.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
}

func newHandoff(t *testing.T) *handoff {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &handoff{ln: ln, conns: make(chan net.Conn, 1024)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(h.conns)
				return
			}
			h.conns <- c
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return h
}

// view is one server's listener on the handoff; closing it leaves the
// socket open.
func (h *handoff) view() net.Listener {
	return &handoffView{h: h, closed: make(chan struct{})}
}

type handoffView struct {
	h      *handoff
	once   sync.Once
	closed chan struct{}
}

func (v *handoffView) Accept() (net.Conn, error) {
	select {
	case c, ok := <-v.h.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	case <-v.closed:
		return nil, net.ErrClosed
	}
}

func (v *handoffView) Close() error   { v.once.Do(func() { close(v.closed) }); return nil }
func (v *handoffView) Addr() net.Addr { return v.h.ln.Addr() }
