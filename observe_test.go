package collab

import (
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/internal/wire"
)

// recorder is an Observer that keeps everything it is told.
type recorder struct {
	mu      sync.Mutex
	started []CallInfo
	events  []CallEvent
	ended   []CallEnd
	// sawInfo is whether CallEnded's context still carried the call.
	sawInfo []bool
}

type recorderKey struct{}

func (r *recorder) CallStarted(ctx context.Context, ci CallInfo) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, ci)
	return context.WithValue(ctx, recorderKey{}, len(r.started))
}

func (r *recorder) CallEvent(ctx context.Context, ev CallEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) CallEnded(ctx context.Context, end CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := CallInfoFrom(ctx)
	r.sawInfo = append(r.sawInfo, ok && ctx.Value(recorderKey{}) != nil)
	r.ended = append(r.ended, end)
}

func (r *recorder) snapshot() ([]CallInfo, []CallEvent, []CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]CallInfo(nil), r.started...), append([]CallEvent(nil), r.events...), append([]CallEnd(nil), r.ended...)
}

func TestObserverSeesRetriesAndEnd(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec), WithRetry(RetryPolicy{MaxRetries: 3, MinWait: time.Millisecond, MaxWait: 2 * time.Millisecond}))
	var transportSaw CallInfo
	m.Inspect = func(r *http.Request) { transportSaw, _ = CallInfoFrom(r.Context()) }
	m.Reply(503, `{"message":"down"}`).Fail(errors.New("reset by "+testToken)).Reply(200, `{"id":4,"iid":2}`)
	_, resp, err := c.Issues.Get(context.Background(), "grp/proj", 42)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)

	started, events, ended := rec.snapshot()
	want := CallInfo{Method: "GET", Route: "/projects/:id/issues/:issue_id", Host: "collab.example.com"}
	assert.Equal(t, []CallInfo{want}, started)
	assert.Equal(t, want, transportSaw, "the transport reads the call from the request context")
	require.Len(t, events, 2)
	assert.Equal(t, CallEvent{Kind: EventRetry, Attempt: 2, Wait: events[0].Wait, Status: 503}, events[0])
	assert.Equal(t, EventRetry, events[1].Kind)
	assert.Equal(t, 3, events[1].Attempt)
	assert.Zero(t, events[1].Status)
	require.Error(t, events[1].Err)
	assert.NotContains(t, events[1].Err.Error(), testToken, "a network error reaches the observer without the token")
	assert.Equal(t, []CallEnd{{Status: 200, Attempts: 3}}, ended)
	assert.Equal(t, []bool{true}, rec.sawInfo, "CallEnded gets the context CallStarted returned")
	assert.Equal(t, "GET /projects/:id/issues/:issue_id", want.Name())
}

func TestObserverSeesFailureAndDecodeError(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec))
	m.Reply(404, `{"message":"404 Project Not Found"}`)
	_, _, err := c.Projects.Get(context.Background(), 9)
	require.ErrorIs(t, err, ErrNotFound)
	m.Reply(200, `{"id":`)
	_, _, err = c.Projects.Get(context.Background(), 9)
	var de *DecodeError
	require.ErrorAs(t, err, &de)

	_, events, ended := rec.snapshot()
	assert.Empty(t, events)
	require.Len(t, ended, 2)
	assert.Equal(t, 404, ended[0].Status)
	assert.ErrorIs(t, ended[0].Err, ErrNotFound)
	assert.Equal(t, 1, ended[0].Attempts)
	assert.Equal(t, 200, ended[1].Status)
	assert.ErrorAs(t, ended[1].Err, &de, "the decode error is the call's error")
}

// A request built by hand is named by the route it matches, never by its
// own path, which may hold names.
func TestObserverRawRequestHasNoRoute(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec))
	m.Reply(200, `{}`)
	_, _, _ = c.Projects.Get(context.Background(), 1) // the SDK has used this route
	for _, path := range []string{"projects/secret%2Fname", "nowhere/secret%2Fname", "projects/1/secret", ""} {
		req, err := c.NewRequest(context.Background(), http.MethodGet, path, nil)
		require.NoError(t, err)
		_, err = c.Do(req, nil)
		require.NoError(t, err)
		resp, err := c.BareDo(req)
		require.NoError(t, err)
		closeBody(resp.Body)
	}
	started, _, _ := rec.snapshot()
	routes := []string{}
	for _, ci := range started[1:] {
		routes = append(routes, ci.Route)
	}
	assert.Equal(t, []string{"/projects/:id", "/projects/:id", "", "", "", "", "", ""}, routes,
		"a hand-built request is named by the SDK route it matches, or not at all")
}

// Each page of an iterator is one call of the list's route.
func TestObserverPagination(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec))
	m.Reply(200, `[{"id":1}]`, "X-Page", "1", "X-Next-Page", "2").Reply(200, `[{"id":2}]`, "X-Page", "2")
	n := 0
	for _, err := range c.Issues.All(context.Background(), "grp/secret", nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n)
	started, _, ended := rec.snapshot()
	route := CallInfo{Method: "GET", Route: "/projects/:id/issues", Host: "collab.example.com"}
	assert.Equal(t, []CallInfo{route, route}, started)
	assert.Len(t, ended, 2)
}

func TestWithObserverNil(t *testing.T) {
	_, err := NewClient("https://collab.example.com", WithObserver(nil))
	assert.ErrorIs(t, err, ErrInvalidArgument)
}

func TestRouteTemplates(t *testing.T) {
	for format, want := range map[string]string{
		"projects":                       "/projects",
		"projects/%s":                    "/projects/:id",
		"projects/%s/issues/%s":          "/projects/:id/issues/:issue_id",
		"projects/%s/issues/%s/notes/%s": "/projects/:id/issues/:issue_id/notes/:note_id",
		"projects/%s/merge_requests/%s/notes/%s/award_emoji/%s": "/projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji/:award_id",
		"projects/%s/hooks/%s":                       "/projects/:id/hooks/:hook_id",
		"projects/%s/repository/branches/%s/protect": "/projects/:id/repository/branches/:branch/protect",
		"projects/%s/repository/commits/%s/builds":   "/projects/:id/repository/commits/:sha/builds",
		"projects/%s/members/%s":                     "/projects/:id/members/:user_id",
		"projects/%s/fork/%s":                        "/projects/:id/fork/:forked_from_id",
		"projects/fork/%s":                           "/projects/fork/:id",
		"projects/user/%s":                           "/projects/user/:user_id",
		"projects/search/%s":                         "/projects/search/:query",
		"groups/%s/projects/%s":                      "/groups/:id/projects/:project_id",
		"projects/%s/labels/%s/subscription":         "/projects/:id/labels/:label_id/subscription",
		"%s/queues":                                  "/:prefix/queues",
	} {
		assert.Equal(t, want, wire.Template(format), format)
	}
}

// TestEveryRouteTemplateHoldsNoValue calls every method of every service
// with recognisable values and checks that each call's CallInfo names its
// route by template only.
func TestEveryRouteTemplateHoldsNoValue(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec))
	m.Reply(200, `{}`)
	segment := regexp.MustCompile(`^(:[a-z_]+|[a-z_]+)$`)
	cv := reflect.ValueOf(c).Elem()
	silent := map[string]bool{}
	templates := map[string]bool{}
	for i := 0; i < cv.NumField(); i++ {
		svc := cv.Field(i)
		if !cv.Type().Field(i).IsExported() || svc.Kind() != reflect.Pointer || !strings.HasSuffix(svc.Type().Elem().Name(), "Service") {
			continue
		}
		for j := 0; j < svc.NumMethod(); j++ {
			name := svc.Type().Elem().Name() + "." + svc.Type().Method(j).Name
			before := len(rec.started)
			callWithValues(svc.Method(j))
			started, _, _ := rec.snapshot()
			if len(started) == before {
				silent[name] = true
			}
			for _, ci := range started[before:] {
				templates[ci.Route] = true
				assert.Equal(t, "collab.example.com", ci.Host, name)
				require.True(t, strings.HasPrefix(ci.Route, "/"), "%s: %q", name, ci.Route)
				for _, s := range strings.Split(ci.Route[1:], "/") {
					assert.Regexp(t, segment, s, "%s: route %q holds a value", name, ci.Route)
				}
				for _, v := range []string{"secretval", "77", "grp"} {
					assert.NotContains(t, ci.Route, v, name)
				}
			}
		}
	}
	keys := make([]string, 0, len(templates))
	for k := range templates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("%d route templates: %s", len(keys), strings.Join(keys, " "))
	assert.Greater(t, len(keys), 60, "every route of the SDK is exercised")
	assert.Empty(t, silent, "methods that sent nothing, so their route was not checked")
}

// callWithValues calls method with recognisable values in every argument,
// and walks an iterator it returns for one item.
func callWithValues(method reflect.Value) {
	mt := method.Type()
	args := make([]reflect.Value, 0, mt.NumIn())
	for i := 0; i < mt.NumIn(); i++ {
		if mt.IsVariadic() && i == mt.NumIn()-1 {
			if elem := mt.In(i).Elem(); elem.Kind() == reflect.String { // label names
				args = append(args, reflect.ValueOf("secretval").Convert(elem))
			}
			break
		}
		args = append(args, valueFor(mt.In(i)))
	}
	out := method.Call(args)
	if len(out) == 1 && out[0].Kind() == reflect.Func {
		yield := reflect.MakeFunc(out[0].Type().In(0), func([]reflect.Value) []reflect.Value {
			return []reflect.Value{reflect.ValueOf(false)}
		})
		out[0].Call([]reflect.Value{yield})
	}
}

var (
	ctxType    = reflect.TypeFor[context.Context]()
	readerType = reflect.TypeFor[io.Reader]()
	writerType = reflect.TypeFor[io.Writer]()
)

// valueFor makes a value of t that a route would show if it leaked: ids
// of 77, strings "secretval", a project path "grp/secretval".
func valueFor(t reflect.Type) reflect.Value {
	switch {
	case t == ctxType:
		return reflect.ValueOf(context.Background())
	case t == readerType:
		return reflect.ValueOf(io.Reader(strings.NewReader("file")))
	case t == writerType:
		return reflect.ValueOf(io.Writer(io.Discard))
	case t.Kind() == reflect.Interface:
		v := reflect.New(t).Elem()
		v.Set(reflect.ValueOf("grp/secretval"))
		return v
	}
	v := reflect.New(t).Elem()
	fill(v, 0)
	return v
}

// setString sets a string, or the string a pointer points to.
func setString(v reflect.Value, s string) {
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		v.SetString(s)
	}
}

func fill(v reflect.Value, depth int) {
	if depth > 3 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("secretval")
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(77)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2016, 1, 2, 3, 4, 5, 0, time.UTC)))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			fill(v.Field(i), depth+1)
			// Values the client checks before sending get a valid form.
			switch {
			case f.Name == "Color":
				setString(v.Field(i), "#aabbcc")
			case strings.HasSuffix(f.Name, "Date"):
				setString(v.Field(i), "2016-01-02")
			}
		}
	case reflect.Slice:
		if v.Type().Elem() == reflect.TypeFor[string]() || v.Type().Elem().Kind() == reflect.Int {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			fill(s.Index(0), depth+1)
			v.Set(s)
		}
	}
}
