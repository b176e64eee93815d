package collabtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ControlPrefix is the path under which the fake serves its control API:
// JSON over HTTP with the powers of the Go helpers, for tests written in
// other languages. No route of the service starts with "/-/", and the
// control API never answers an injected request fault.
const ControlPrefix = "/-/collabtest/"

// controlMux routes the control API. Every route needs an administrator's
// token, as the service's own API takes it (PRIVATE-TOKEN, private_token or
// a Bearer token).
func (s *Server) controlMux() http.Handler {
	mux := http.NewServeMux()
	for pattern, h := range map[string]func(*http.Request) (int, any, error){
		"PUT /-/collabtest/hooks/{hook_id}/token": s.controlHookToken,
		"POST /-/collabtest/faults/request":       s.controlRequestFault,
		"POST /-/collabtest/faults/delivery":      s.controlDeliveryFault,
		"GET /-/collabtest/deliveries":            s.controlDeliveries,
		"POST /-/collabtest/deliveries/wait":      s.controlWait,
		"POST /-/collabtest/reset":                s.controlReset,
		"POST /-/collabtest/seed":                 s.controlSeed,
		"PUT /-/collabtest/ratelimit":             s.controlRateLimit,
		"GET /-/collabtest/requests":              s.controlRequests,
		"DELETE /-/collabtest/requests":           s.controlClearRequests,
	} {
		mux.Handle(pattern, s.controlHandler(h))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		writeError(w, errNoRoute(r, func(r *http.Request) bool { _, p := mux.Handler(r); return p != "" }))
	})
}

// controlHandler checks the administrator's token, then writes h's answer
// as JSON or its error as {"message": ...}.
func (s *Server) controlHandler(h func(*http.Request) (int, any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{s: s, w: w, r: r, form: r.URL.Query()}
		s.mu.Lock()
		err := s.authenticate(c)
		if err == nil && !c.user.admin {
			err = errForbidden
		}
		s.mu.Unlock()
		status, out := 0, any(nil)
		if err == nil {
			status, out, err = h(r)
		}
		var ae *apiError
		switch {
		case errors.As(err, &ae):
			writeError(w, ae)
		case err != nil:
			writeError(w, errBadRequest("400 (Bad request) "+err.Error()))
		default:
			writeJSON(w, status, out)
		}
	})
}

// decodeControl reads a JSON object body into v; an empty body leaves v
// as it is. Unknown keys are an error, so that a typo is not ignored.
func decodeControl(r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return fmt.Errorf("unreadable body: %v", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON body: %v", err)
	}
	return nil
}

// decodeChecked is decodeControl, then fails with why unless valid, which
// reads what v was decoded into.
func decodeChecked(r *http.Request, v any, valid func() bool, why string) error {
	if err := decodeControl(r, v); err != nil {
		return err
	}
	if !valid() {
		return errors.New(why)
	}
	return nil
}

// duration is a time.Duration written as a Go duration string ("1.5s").
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"1.5s\", not %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("bad duration %q", s)
	}
	*d = duration(v)
	return nil
}

func (s *Server) controlHookToken(r *http.Request) (int, any, error) {
	var in struct {
		Token string `json:"token"`
	}
	if err := decodeControl(r, &in); err != nil {
		return 0, nil, err
	}
	id := r.PathValue("hook_id")
	if !isDigits(id) {
		return 0, nil, errNotFound("Hook")
	}
	if err := s.SetHookToken(atoi(id), in.Token); err != nil {
		return 0, nil, errNotFound("Hook")
	}
	return http.StatusOK, map[string]any{"hook_id": atoi(id), "token_set": in.Token != ""}, nil
}

func (s *Server) controlRequestFault(r *http.Request) (int, any, error) {
	var in struct {
		Count  int `json:"count"`
		Status int `json:"status"`
	}
	valid := func() bool { return in.Count >= 0 && in.Status >= 100 && in.Status <= 599 }
	if err := decodeChecked(r, &in, valid, "count must be 0 or more and status an HTTP status (100-599)"); err != nil {
		return 0, nil, err
	}
	s.FailNext(in.Count, in.Status)
	return http.StatusCreated, in, nil
}

// controlRateLimit sets the per-token rate limit: {"rate": 50, "burst": 50};
// a rate of 0 removes it; the burst defaults to the rate, at least 1.
func (s *Server) controlRateLimit(r *http.Request) (int, any, error) {
	var in struct {
		Rate  float64 `json:"rate"`
		Burst int     `json:"burst"`
	}
	valid := func() bool { return in.Rate >= 0 && in.Burst >= 0 }
	if err := decodeChecked(r, &in, valid, "rate and burst must not be negative"); err != nil {
		return 0, nil, err
	}
	if in.Burst == 0 {
		in.Burst = max(1, int(in.Rate))
	}
	s.SetRateLimit(in.Rate, in.Burst)
	return http.StatusOK, in, nil
}

// loggedJSON is a LoggedRequest as the control API shows it.
type loggedJSON struct {
	Time   time.Time `json:"time"`
	Method string    `json:"method"`
	Path   string    `json:"path"`
	Status int       `json:"status"`
	Token  string    `json:"token_sha256_prefix"`
}

func (s *Server) controlRequests(*http.Request) (int, any, error) {
	log := s.Requests()
	out := make([]loggedJSON, len(log))
	for i, e := range log {
		out[i] = loggedJSON(e)
	}
	return http.StatusOK, out, nil
}

func (s *Server) controlClearRequests(*http.Request) (int, any, error) {
	s.ClearRequests()
	return http.StatusOK, map[string]any{"cleared": true}, nil
}

func (s *Server) controlDeliveryFault(r *http.Request) (int, any, error) {
	var in struct {
		Duplicate bool     `json:"duplicate"`
		Drop      bool     `json:"drop"`
		Delay     duration `json:"delay"`
	}
	if err := decodeControl(r, &in); err != nil {
		return 0, nil, err
	}
	s.InjectDeliveryFault(DeliveryFault{Duplicate: in.Duplicate, Drop: in.Drop, Delay: time.Duration(in.Delay)})
	return http.StatusCreated, map[string]any{
		"duplicate": in.Duplicate, "drop": in.Drop, "delay": time.Duration(in.Delay).String(),
	}, nil
}

func (s *Server) controlDeliveries(*http.Request) (int, any, error) {
	return http.StatusOK, deliveriesJSON(s.Deliveries()), nil
}

// controlWait waits until count attempts have completed, or (with idle)
// until nothing is queued or in flight, for at most timeout (10s by
// default); it answers the attempts so far, or 504 when time ran out.
func (s *Server) controlWait(r *http.Request) (int, any, error) {
	in := struct {
		Count   int      `json:"count"`
		Idle    bool     `json:"idle"`
		Timeout duration `json:"timeout"`
	}{Timeout: duration(10 * time.Second)}
	valid := func() bool { return in.Count > 0 || in.Idle }
	if err := decodeChecked(r, &in, valid, `give "count" (at least 1) or "idle": true`); err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(in.Timeout))
	defer cancel()
	var err error
	if in.Count > 0 {
		_, err = s.WaitDeliveries(ctx, in.Count)
	}
	if err == nil && in.Idle {
		err = s.WaitIdle(ctx)
	}
	if err != nil {
		return 0, nil, errStatus(http.StatusGatewayTimeout, "504 Gateway Timeout: deliveries did not settle: "+err.Error())
	}
	return http.StatusOK, deliveriesJSON(s.Deliveries()), nil
}

// deliveryJSON is a Delivery as the control API shows it.
type deliveryJSON struct {
	HookID    int               `json:"hook_id"`
	ProjectID int               `json:"project_id"`
	URL       string            `json:"url"`
	Event     string            `json:"event"`
	Header    map[string]string `json:"headers"`
	Body      json.RawMessage   `json:"body"`
	Attempt   int               `json:"attempt"`
	Status    int               `json:"status"`
	Err       string            `json:"error"`
	Duplicate bool              `json:"duplicate"`
}

func deliveriesJSON(ds []Delivery) []deliveryJSON {
	out := make([]deliveryJSON, 0, len(ds))
	for _, d := range ds {
		h := map[string]string{}
		for k := range d.Header {
			h[k] = d.Header.Get(k)
		}
		body := json.RawMessage(d.Body)
		if !json.Valid(body) {
			body, _ = json.Marshal(string(d.Body))
		}
		out = append(out, deliveryJSON{d.HookID, d.ProjectID, d.URL, d.Event, h, body, d.Attempt, d.Status, d.Err, d.Duplicate})
	}
	return out
}

// controlReset empties the fake as a new server is: only the administrator
// is left, with the same tokens. Delivery records, hook tokens, pending
// faults and the request log go too; deliveries already queued still go
// out. A rate limit stays.
func (s *Server) controlReset(*http.Request) (int, any, error) {
	s.reset()
	return http.StatusOK, map[string]any{"admin_id": s.AdminID}, nil
}

func (s *Server) reset() {
	s.mu.Lock()
	admin := s.users[s.AdminID]
	tokens := map[string]*token{}
	for secret, t := range s.tokens {
		if t.userID == admin.id {
			tokens[secret] = t
		}
	}
	s.db = db{lastID: s.freshLastID}
	s.db.init()
	s.users[admin.id], s.tokens = admin, tokens
	s.mu.Unlock()
	s.FailNext(0, 0)
	s.ClearRequests()
	d := s.webhooks
	d.mu.Lock()
	d.tokens, d.faults, d.done = map[int]string{}, nil, nil
	d.notifyLocked()
	d.mu.Unlock()
}
