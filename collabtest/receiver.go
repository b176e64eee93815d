package collabtest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// Receiver is a webhook endpoint on loopback whose handler a test swaps,
// for receivers that stop and start again, such as a bot across a restart.
// While no handler is set the receiver is down: deliveries are answered
// 503, which the sender never tries again, so what happens meanwhile reaches
// the next receiver only through its catch-up.
type Receiver struct {
	URL string // the hook URL
	srv *httptest.Server
	h   atomic.Pointer[http.Handler]
}

// AddReceiver starts a Receiver and registers it as a hook of the project
// for every event kind. NewTestServer's servers close it when the test ends;
// otherwise call Close. An unknown project is a mistake (see Err) and
// returns nil.
func (s *Server) AddReceiver(projectID int) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL + "/"
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[projectID] == nil {
		r.srv.Close()
		s.misuse("AddReceiver: no project %d", projectID)
		return nil
	}
	id := s.newID()
	s.hooks[id] = &hook{id: id, projectID: projectID, url: r.URL, pushEvents: true, issuesEvents: true,
		mergeRequestsEvents: true, tagPushEvents: true, noteEvents: true, buildEvents: true, createdAt: s.now()}
	if s.t != nil {
		s.t.Cleanup(r.Close)
	}
	return r
}

// Set makes h receive the deliveries from now on; nil takes the receiver
// down.
func (r *Receiver) Set(h http.Handler) {
	if h == nil {
		r.h.Store(nil)
		return
	}
	r.h.Store(&h)
}

// Close stops the receiver's server.
func (r *Receiver) Close() { r.srv.Close() }

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if h := r.h.Load(); h != nil {
		(*h).ServeHTTP(w, req)
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}
