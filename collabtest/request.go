package collabtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// call is one request in flight: its caller, its parameters, the records
// its path names, and the writer.
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	user *user      // the authenticated caller, after sudo
	form url.Values // every parameter: query, body and path values

	// Records loaded from the path before the handler runs.
	project   *project
	group     *group
	issue     *issue
	mr        *mergeRequest
	ticket    *ticket // the issue's or merge request's common part
	note      *note
	award     *award
	build     *build
	hook      *hook
	milestone *milestone

	stream []byte // written by flush after the state lock is released
}

// maxBody bounds the request bodies the fake reads, except uploads.
const maxBody = 1 << 20

// readParams merges the query, the body (url-encoded, multipart or a JSON
// object) and the path values into c.form, as the server reads parameters:
// the body wins over the query and the path over both.
func (c *call) readParams(rt *route) error {
	c.form = c.r.URL.Query()
	if !rt.rule.rawBody {
		limit := int64(maxBody)
		if rt.rule.upload {
			c.s.mu.Lock()
			limit += c.s.maxUploadBytes()
			c.s.mu.Unlock()
		}
		if err := c.mergeBody(limit); err != nil {
			return err
		}
	}
	if rt.consumer {
		dropBlank(c.form)
	}
	for _, name := range rt.wild {
		c.form[name] = []string{c.r.PathValue(name)}
	}
	return nil
}

// mergeBody adds the body's parameters to c.form; they win over the query.
func (c *call) mergeBody(limit int64) error {
	body, err := c.readBody(limit)
	for k, v := range body {
		c.form[k] = v
	}
	return err
}

// dropBlank removes the parameters whose every value is blank (empty or
// all space), because the consumer API copies only present, non-blank
// attributes: a blank optional value leaves the record as it was, and a
// blank required one is missing. labels is read directly, so an empty
// labels stays and clears them (a JSON null was already left out).
func dropBlank(form url.Values) {
	for k, vs := range form {
		if k == "labels" && len(vs) > 0 {
			continue
		}
		blank := true
		for _, v := range vs {
			if strings.TrimSpace(v) != "" {
				blank = false
				break
			}
		}
		if blank {
			delete(form, k)
		}
	}
}

// readBody reads the body's parameters by its content type; other types
// carry none.
func (c *call) readBody(limit int64) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	isJSON := ct == "application/json" || strings.HasSuffix(ct, "+json")
	if ct != "application/x-www-form-urlencoded" && ct != "multipart/form-data" && !isJSON {
		return nil, nil
	}
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, limit)
	tooLarge := func(err error) bool {
		var mbe *http.MaxBytesError
		return errors.As(err, &mbe)
	}
	if ct == "multipart/form-data" {
		if err := c.r.ParseMultipartForm(32 << 20); err != nil {
			if tooLarge(err) {
				return nil, errTooLarge
			}
			return nil, errBadRequest("400 (Bad request) malformed multipart body")
		}
		return url.Values(c.r.MultipartForm.Value), nil
	}
	raw, err := io.ReadAll(c.r.Body)
	if err != nil {
		if tooLarge(err) {
			return nil, errTooLarge
		}
		return nil, errBadRequest("400 (Bad request) unreadable body")
	}
	if isJSON {
		return jsonParams(raw)
	}
	v, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, errBadRequest("400 (Bad request) malformed form body")
	}
	return v, nil
}

// jsonParams turns a JSON object body into parameters the way the server
// reads the equivalent form: strings, numbers and booleans as their text
// ("5", "true"), arrays as name[] (several values), and nested objects as
// name[key]; null is left out, as if not sent. An empty body, or one whose
// value is not an object (clients send null when they have no options),
// has no parameters.
func jsonParams(raw []byte) (url.Values, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errBadRequest("400 (Bad request) invalid JSON body: " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errBadRequest("400 (Bad request) invalid JSON body: data after the value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, nil
	}
	out := url.Values{}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		flatten(out, k, obj[k])
	}
	return out, nil
}

func flatten(out url.Values, key string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			flatten(out, key+"["+k+"]", sub)
		}
	case []any:
		if len(v) == 0 {
			out[key+"[]"] = append(out[key+"[]"], []string{}...)
		}
		for _, sub := range v {
			flatten(out, key+"[]", sub)
		}
	case string:
		out.Add(key, v)
	case bool:
		if v {
			out.Add(key, "true")
		} else {
			out.Add(key, "false")
		}
	case json.Number:
		out.Add(key, v.String())
	}
}

// cleanup removes the temporary files of a multipart body.
func (c *call) cleanup() {
	if c.r.MultipartForm != nil {
		_ = c.r.MultipartForm.RemoveAll()
	}
}

// has reports whether parameter name was sent at all, as name or name[].
func (c *call) has(name string) bool {
	_, ok := c.form[name]
	_, list := c.form[name+"[]"]
	return ok || list
}

// str returns parameter name, or "".
func (c *call) str(name string) string { return c.form.Get(name) }

// intParam reads an optional integer parameter; a malformed value is a 400.
func (c *call) intParam(name string) (n int, present bool, err error) {
	v := strings.TrimSpace(c.form.Get(name))
	if v == "" {
		return 0, false, nil
	}
	neg := strings.HasPrefix(v, "-")
	digits := strings.TrimPrefix(v, "-")
	if !isDigits(digits) {
		return 0, true, errInvalid(name, "is invalid")
	}
	n = atoi(digits)
	if neg {
		n = -n
	}
	return n, true, nil
}

// requiredInt reads an integer parameter that must be sent: a missing one
// is a 400 that names it.
func (c *call) requiredInt(name string) (int, error) {
	n, present, err := c.intParam(name)
	if err == nil && !present {
		err = errMissing(name)
	}
	return n, err
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

// setBools updates each flag whose parameter was sent.
func (c *call) setBools(flags map[string]*bool) {
	for name, dst := range flags {
		c.setBool(name, dst)
	}
}

// setStr updates *dst when the parameter was sent.
func (c *call) setStr(name string, dst *string) {
	if _, ok := c.form[name]; ok {
		*dst = c.form.Get(name)
	}
}

// listParam reads a list such as labels: comma-separated values, sent once
// or several times, as name or name[].
func (c *call) listParam(name string) []string {
	var out []string
	for _, v := range append(c.form[name], c.form[name+"[]"]...) {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// maxNameLength is the server's limit on titles and names, in characters.
const maxNameLength = 255

// nameParam reads a title or name: required ones answer 400 "not given"
// when absent or blank, and a blank optional one is not sent; longer than
// 255 characters is a validation error under errKey (the record's
// attribute, which may differ from the parameter).
func (c *call) nameParam(name, errKey string, required bool) (v string, present bool, err error) {
	v = strings.TrimSpace(c.str(name))
	switch {
	case v == "" && required:
		return "", false, errMissing(name)
	case v == "":
		return "", false, nil
	case utf8.RuneCountInString(v) > maxNameLength:
		return "", true, errInvalid(errKey, "is too long (maximum is 255 characters)")
	}
	return v, true, nil
}

// timeParam reads an optional ISO 8601 parameter such as created_at.
func (c *call) timeParam(name string) (t time.Time, present bool, err error) {
	v := strings.TrimSpace(c.form.Get(name))
	if v == "" {
		return time.Time{}, false, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), true, nil
		}
	}
	return time.Time{}, true, errInvalid(name, "is invalid")
}
