package collabtest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/serverform"
)

// apiError is a failure a handler returns: the status and the JSON body
// the server sends for it (nil for none).
type apiError struct {
	status int
	body   any
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %v", e.status, e.body) }

// The errors handlers return, in the server's five body shapes.
var (
	errUnauthorized = errStatus(http.StatusUnauthorized, "401 Unauthorized")
	errForbidden    = errStatus(http.StatusForbidden, "403 Forbidden")
	errTooLarge     = errStatus(http.StatusRequestEntityTooLarge, "413 Request Entity Too Large")
	errNotModified  = &apiError{status: http.StatusNotModified}
)

// errStatus is the {"message": "..."} shape.
func errStatus(status int, msg string) *apiError {
	return &apiError{status: status, body: map[string]any{"message": msg}}
}

// errNotFound is "404 <Thing> Not Found", or "404 Not found" for an unnamed record.
func errNotFound(thing string) *apiError {
	if thing == "" {
		return errStatus(http.StatusNotFound, "404 Not found")
	}
	return errStatus(http.StatusNotFound, "404 "+thing+" Not Found")
}

// errMissing is the 400 naming a required parameter that was not given.
func errMissing(name string) *apiError {
	return errStatus(http.StatusBadRequest, `400 (Bad request) "`+name+`" not given`)
}

func errBadRequest(msg string) *apiError { return errStatus(http.StatusBadRequest, msg) }
func errConflict(msg string) *apiError   { return errStatus(http.StatusConflict, msg) }

// errInvalid is the 400 validation shape for one attribute:
// {"message": {"field": ["..."]}}.
func errInvalid(field, msg string) *apiError { return errFields(map[string]any{field: []string{msg}}) }

// errFields is the 400 validation shape for several attributes; nested
// entities are nested maps of the same shape.
func errFields(fields map[string]any) *apiError {
	return &apiError{status: http.StatusBadRequest, body: map[string]any{"message": fields}}
}

// errError is the {"error": "..."} shape of trace and hook errors.
func errError(status int, msg string) *apiError {
	return &apiError{status: status, body: map[string]any{"error": msg}}
}

// errList is the bare array-of-strings shape.
func errList(status int, msgs ...string) *apiError { return &apiError{status: status, body: msgs} }

// writeError writes err: an *apiError as it says, anything else as 500.
func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = errStatus(http.StatusInternalServerError, "500 Internal Server Error")
	}
	if e.body == nil {
		w.WriteHeader(e.status)
		return
	}
	writeJSON(w, e.status, e.body)
}

// finish writes the handler's error, if any.
func (c *call) finish(err error) {
	if err != nil {
		writeError(c.w, err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"message":"500 Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// json writes v with status and returns nil, so that a handler can end
// with "return c.json(...)".
func (c *call) json(status int, v any) error {
	writeJSON(c.w, status, v)
	return nil
}

// sendStream answers with a body written after the lock is released, so a
// large download does not stall other requests. data must not be mutated
// afterwards; stored files are replaced, never edited in place.
func (c *call) sendStream(status int, header http.Header, data []byte) error {
	for k, v := range header {
		c.w.Header()[k] = v
	}
	c.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	c.w.WriteHeader(status)
	c.stream = data
	return nil
}

func (c *call) flush() {
	if c.stream != nil {
		_, _ = c.w.Write(c.stream)
		c.stream = nil
	}
}

// pageParams reads per_page and page as the server does: per_page
// defaults to 20, above 100 is 100 and below 1 is 20; page below 1 is 1.
func (c *call) pageParams() (perPage, pg int) {
	perPage, pg = 20, 1
	if n, _, err := c.intParam("per_page"); err == nil && n > 100 {
		perPage = 100
	} else if err == nil && n >= 1 {
		perPage = n
	} else if v := strings.TrimSpace(c.str("per_page")); err != nil && v != "" && strings.Trim(v, "0123456789") == "" {
		perPage = 100 // too many digits to read: far above 100
	}
	if n, _, err := c.intParam("page"); err == nil && n > 1 {
		pg = n
	}
	return perPage, pg
}

// page writes one page of items with the seven pagination headers and
// Link, the values clamped the same way in all of them. render turns an
// item into JSON.
func page[T any](c *call, items []T, render func(T) any) error {
	perPage, pg := c.pageParams()
	total := len(items)
	pages := (total + perPage - 1) / perPage
	start := total
	if pg-1 < pages {
		start = (pg - 1) * perPage
	}
	end := min(start+perPage, total)

	h := c.w.Header()
	h.Set("X-Total", strconv.Itoa(total))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	h.Set("X-Per-Page", strconv.Itoa(perPage))
	h.Set("X-Page", strconv.Itoa(pg))
	h.Set("X-Next-Page", "")
	h.Set("X-Prev-Page", "")
	if pg < pages {
		h.Set("X-Next-Page", strconv.Itoa(pg+1))
	}
	if pg > 1 {
		h.Set("X-Prev-Page", strconv.Itoa(pg-1))
	}
	var links []string
	link := func(rel string, n int) {
		links = append(links, `<`+c.pageURL(n, perPage)+`>; rel="`+rel+`"`)
	}
	if pg > 1 {
		link("prev", pg-1)
	}
	if pg < pages {
		link("next", pg+1)
	}
	link("first", 1)
	link("last", pages)
	h.Set("Link", strings.Join(links, ", "))

	out := make([]any, 0, end-start)
	for _, it := range items[start:end] {
		out = append(out, render(it))
	}
	return c.json(http.StatusOK, out)
}

// pageURL is the request's full URL with every query parameter, sorted,
// and page=n; a per_page that was sent is repeated as clamped.
func (c *call) pageURL(n, perPage int) string {
	q := c.r.URL.Query()
	q.Set("page", strconv.Itoa(n))
	if q.Has("per_page") {
		q.Set("per_page", strconv.Itoa(perPage))
	}
	u := url.URL{Scheme: "http", Host: c.r.Host, Path: c.r.URL.Path, RawPath: c.r.URL.RawPath, RawQuery: q.Encode()}
	return u.String()
}

// all writes an unpaginated list (labels, branches, group members, MR commits).
func all[T any](c *call, items []T, render func(T) any) error {
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, render(it))
	}
	return c.json(http.StatusOK, out)
}

// sortItems orders items by key in the direction of the "sort" parameter
// (def when absent), with ties broken by id in the same direction.
func sortItems[T any, K cmp.Ordered](c *call, items []T, def string, key func(T) K, id func(T) int) {
	desc := strings.ToLower(cmp.Or(c.form.Get("sort"), def)) == "desc"
	slices.SortStableFunc(items, func(a, b T) int {
		// Ties (items made within one clock tick) follow the id in the
		// same direction, as the server's secondary order does.
		r := cmp.Or(cmp.Compare(key(a), key(b)), cmp.Compare(id(a), id(b)))
		if desc {
			r = -r
		}
		return r
	})
}

// ts renders a timestamp the way the server does, or null for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(serverform.APITime)
}

// toggleCaller adds (on) or removes the caller in a set of users, as
// subscribing and starring do:
// 201 or 200 with render's record, or 304 when nothing changes.
func (c *call) toggleCaller(subs map[int]bool, on bool, render func() any) error {
	if subs[c.user.id] == on {
		return errNotModified
	}
	status := http.StatusOK
	if on {
		subs[c.user.id] = true
		status = http.StatusCreated
	} else {
		delete(subs, c.user.id)
	}
	return c.json(status, render())
}

// orderByTime sorts by created_at (the default) or updated_at, newest first
// unless sort=asc; any other order_by is a 400.
func orderByTime[T any](c *call, items []T, created, updated func(T) time.Time, id func(T) int) error {
	var key func(T) time.Time
	switch c.str("order_by") {
	case "", "created_at":
		key = created
	case "updated_at":
		key = updated
	default:
		return errInvalid("order_by", "does not have a valid value")
	}
	sortItems(c, items, "desc", func(v T) int64 { return key(v).UnixNano() }, id)
	return nil
}
