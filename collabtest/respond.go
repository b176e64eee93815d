package collabtest

import (
	"cmp"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// call is one request in flight: its caller, path params, parameters, and
// the writer, with helpers for the contract's answers.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	user   *user // the authenticated caller, after sudo
	params map[string]string
	form   url.Values // query and form body together
	wrote  bool
	stream []byte // written by flush after the state lock is released
}

// maxFormBody bounds the url-encoded bodies the fake reads.
const maxFormBody = 1 << 20

// parseForm merges the query with a url-encoded body. A multipart body is
// left for the handler.
func (c *call) parseForm() bool {
	c.form = c.r.URL.Query()
	ct, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if ct != "application/x-www-form-urlencoded" {
		return true
	}
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, maxFormBody)
	if err := c.r.ParseForm(); err != nil {
		c.fail(http.StatusBadRequest, "400 (Bad request) malformed form body")
		return false
	}
	for k, v := range c.r.PostForm {
		c.form[k] = v
	}
	return true
}

// json writes v with status.
func (c *call) json(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"message":"500 Internal Server Error"}`)
	}
	c.w.Header().Set("Content-Type", "application/json")
	c.w.WriteHeader(status)
	_, _ = c.w.Write(b)
	c.wrote = true
}

// fail writes the {"message": "..."} error shape.
func (c *call) fail(status int, msg string) { c.json(status, map[string]any{"message": msg}) }

// failError writes the {"error": "..."} shape used by trace and hook errors.
func (c *call) failError(status int, msg string) { c.json(status, map[string]any{"error": msg}) }

// failList writes the bare array-of-strings shape.
func (c *call) failList(status int, msgs ...string) { c.json(status, msgs) }

// invalid writes the 400 validation shape: {"message": {"field": ["..."]}}.
// Nested entities are nested maps of the same shape.
func (c *call) invalid(fields map[string]any) {
	c.json(http.StatusBadRequest, map[string]any{"message": fields})
}

// missing writes 400 naming a required parameter that was not given.
func (c *call) missing(name string) {
	c.fail(http.StatusBadRequest, `400 (Bad request) "`+name+`" not given`)
}

// notFound writes "404 <Thing> Not Found", or "404 Not found" for an unnamed record.
func (c *call) notFound(thing string) {
	if thing == "" {
		c.fail(http.StatusNotFound, "404 Not found")
		return
	}
	c.fail(http.StatusNotFound, "404 "+thing+" Not Found")
}

func (c *call) forbidden()          { c.fail(http.StatusForbidden, "403 Forbidden") }
func (c *call) unauthorized()       { c.fail(http.StatusUnauthorized, "401 Unauthorized") }
func (c *call) notModified()        { c.w.WriteHeader(http.StatusNotModified); c.wrote = true }
func (c *call) conflict(m string)   { c.fail(http.StatusConflict, m) }
func (c *call) badRequest(m string) { c.fail(http.StatusBadRequest, m) }

// sendStream answers with a body written after the lock is released, so a
// large download does not stall other requests. data must not be mutated
// afterwards; stored files are replaced, never edited in place.
func (c *call) sendStream(status int, header http.Header, data []byte) {
	for k, v := range header {
		c.w.Header()[k] = v
	}
	c.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	c.w.WriteHeader(status)
	c.wrote = true
	c.stream = data
}

func (c *call) flush() {
	if c.stream != nil {
		_, _ = c.w.Write(c.stream)
		c.stream = nil
	}
}

// has reports whether parameter name was sent at all.
func (c *call) has(name string) bool { _, ok := c.form[name]; return ok }

// str returns parameter name, or "".
func (c *call) str(name string) string { return c.form.Get(name) }

// pathInt reads an integer path parameter, answering 404 when it is not one.
func (c *call) pathInt(name string) (int, bool) {
	n, err := strconv.Atoi(c.params[name])
	if err != nil || n < 0 {
		c.notFound("")
		return 0, false
	}
	return n, true
}

// intParam reads an optional integer parameter; a malformed value is a 400.
func (c *call) intParam(name string) (n int, present, ok bool) {
	v := strings.TrimSpace(c.form.Get(name))
	if !c.has(name) || v == "" {
		return 0, false, true
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		c.invalid(map[string]any{name: []string{"is invalid"}})
		return 0, true, false
	}
	return n, true, true
}

// boolParam reads an optional boolean the way the server does: true, 1, t
// and on (any case) are true; anything else sent is false.
func (c *call) boolParam(name string) (v, present bool) {
	if !c.has(name) {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(c.form.Get(name))) {
	case "true", "1", "t", "on":
		return true, true
	}
	return false, true
}

// setBool updates *dst when the parameter was sent.
func (c *call) setBool(name string, dst *bool) {
	if v, ok := c.boolParam(name); ok {
		*dst = v
	}
}

// setStr updates *dst when the parameter was sent.
func (c *call) setStr(name string, dst *string) {
	if c.has(name) {
		*dst = c.form.Get(name)
	}
}

// listParam reads a comma-separated list such as labels.
func (c *call) listParam(name string) []string {
	var out []string
	for _, v := range c.form[name] {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// timeParam reads an optional ISO 8601 parameter such as created_at.
func (c *call) timeParam(name string) (t time.Time, present, ok bool) {
	v := strings.TrimSpace(c.form.Get(name))
	if v == "" {
		return time.Time{}, false, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true, true
		}
	}
	c.invalid(map[string]any{name: []string{"is invalid"}})
	return time.Time{}, true, false
}

// page writes one page of items with the seven pagination headers and Link
// exactly as the server notes describe. render turns an item into JSON.
func page[T any](c *call, items []T, render func(T) any) {
	perPage := 20
	if n, err := strconv.Atoi(c.form.Get("per_page")); err == nil {
		perPage = n
	}
	if perPage > 100 {
		perPage = 100
	} else if perPage < 1 {
		perPage = 20
	}
	pg := 1
	if n, err := strconv.Atoi(c.form.Get("page")); err == nil && n > 1 {
		pg = n
	}
	total := len(items)
	pages := (total + perPage - 1) / perPage
	start := min((pg-1)*perPage, total)
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
		links = append(links, `<`+c.pageURL(n)+`>; rel="`+rel+`"`)
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
	c.json(http.StatusOK, out)
}

// pageURL is the request's full URL with every query parameter, sorted, and page=n.
func (c *call) pageURL(n int) string {
	q := c.r.URL.Query()
	q.Set("page", strconv.Itoa(n))
	u := url.URL{Scheme: "http", Host: c.r.Host, Path: c.r.URL.Path, RawPath: c.r.URL.RawPath, RawQuery: q.Encode()}
	return u.String()
}

// all writes an unpaginated list (labels, branches, group members, MR commits).
func all[T any](c *call, items []T, render func(T) any) {
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, render(it))
	}
	c.json(http.StatusOK, out)
}

// sortItems orders items by key in the direction of the "sort" parameter
// (def when absent), with ties broken by id ascending for a stable order.
func sortItems[T any, K cmp.Ordered](c *call, items []T, def string, key func(T) K, id func(T) int) {
	desc := strings.ToLower(cmp.Or(c.form.Get("sort"), def)) == "desc"
	slices.SortStableFunc(items, func(a, b T) int {
		r := cmp.Compare(key(a), key(b))
		if desc {
			r = -r
		}
		if r == 0 {
			return cmp.Compare(id(a), id(b))
		}
		return r
	})
}

// ts renders a timestamp the way the server does, or null for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// orNil renders "" as null.
func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// toggleCaller adds (on) or removes the caller in a set of users, as
// subscribing and starring do:
// 201 or 200 with render's record, or 304 when nothing changes.
func (c *call) toggleCaller(subs map[int]bool, on bool, render func() any) {
	if subs[c.user.id] == on {
		c.notModified()
		return
	}
	status := http.StatusOK
	if on {
		subs[c.user.id] = true
		status = http.StatusCreated
	} else {
		delete(subs, c.user.id)
	}
	c.json(status, render())
}

// orderByTime sorts by created_at (the default) or updated_at, newest first
// unless sort=asc; any other order_by is a 400.
func orderByTime[T any](c *call, items []T, created, updated func(T) time.Time, id func(T) int) bool {
	var key func(T) time.Time
	switch c.str("order_by") {
	case "", "created_at":
		key = created
	case "updated_at":
		key = updated
	default:
		c.invalid(map[string]any{"order_by": []string{"does not have a valid value"}})
		return false
	}
	sortItems(c, items, "desc", func(v T) int64 { return key(v).UnixNano() }, id)
	return true
}
