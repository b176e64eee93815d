package collabtest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// FuzzRequestParsing sends arbitrary methods, paths, queries, headers and
// bodies through the whole request pipeline (routing, form parsing,
// authentication, sudo, handlers) and requires an answer that is neither a
// panic nor a 500.
func FuzzRequestParsing(f *testing.F) {
	s := mustServer(f)
	f.Cleanup(s.Close)
	seeds := []struct{ method, target, ctype, body, sudo string }{
		{"GET", "/api/v3/projects?page=2&per_page=-1", "", "", ""},
		{"GET", "/api/v3/projects/1%2F2/issues?labels=a,b&state=opened", "", "", ""},
		{"POST", "/api/v3/projects", "application/x-www-form-urlencoded", "name=x&visibility_level=abc", ""},
		{"PUT", "/api/v3/projects/1", "application/x-www-form-urlencoded", "%zz", ""},
		{"POST", "/api/v3/projects/1/uploads", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nhi\r\n--x--\r\n", ""},
		{"PATCH", "/ci/api/v1/builds/1/trace.txt", "text/plain", "part", ""},
		{"POST", "/ci/api/v1/builds/register", "application/x-www-form-urlencoded", "token=x&info[name]=y", ""},
		{"GET", "/api/v3/groups/..%2F..?sudo=1", "", "", "999"},
		{"DELETE", "/api/v3/projects/1/labels?name=", "", "", "root"},
		{"GET", "/api/v3/jobqueue/queue_metrics.json", "", "", ""},
		{"POST", "/api/v3/projects/1/issues", "application/json", `{"title":"t","labels":["a",{"b":[1,null,true]}],"milestone_id":1e99}`, ""},
		{"PUT", "/api/v3/projects/1/repository/branches/a/b/protect", "application/json", `[]`, ""},
		{"POST", "/api/v3/projects", "multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nn\r\n--x--\r\n", ""},
	}
	for _, sd := range seeds {
		f.Add(sd.method, sd.target, sd.ctype, sd.body, sd.sudo)
	}
	f.Fuzz(func(t *testing.T, method, target, ctype, body, sudo string) {
		if !strings.HasPrefix(target, "/") {
			target = "/" + target
		}
		req, err := http.NewRequest(method, "http://fake.example"+target, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("PRIVATE-TOKEN", s.AdminToken)
		req.Header.Set("BUILD-TOKEN", "x")
		req.Header.Set("Content-Range", body)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if sudo != "" {
			req.Header.Set("SUDO", sudo)
		}
		w := httptest.NewRecorder()
		s.serveHTTP(w, req)
		if s.Panics() != 0 {
			t.Fatalf("%s %s panicked", method, target)
		}
		if w.Code >= 500 {
			t.Fatalf("%s %s answered %d: %s", method, target, w.Code, w.Body.String())
		}
	})
}

// FuzzContentRange checks the fake's Content-Range parser: it never panics,
// and what it accepts is a start the header really begins with.
func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"0-41", "42-99", "bytes 0-1", " 7 - 9 ", "-", "x-1", "99999999999999999999-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		start, err := rangeStart(h)
		if err != nil {
			return
		}
		if start < 0 {
			t.Fatalf("negative start %d from %q", start, h)
		}
		if !strings.Contains(h, strconv.FormatInt(start, 10)) {
			t.Fatalf("start %d does not appear in %q", start, h)
		}
	})
}
