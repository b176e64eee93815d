package cassette_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/collabsvc/collab/collabtest/cassette"
)

// FuzzReplay reads any cassette and answers any request from it: a bad
// cassette is an error and a request that matches nothing is a
// MismatchError, never a panic.
func FuzzReplay(f *testing.F) {
	f.Add(`{"format":"collab-cassette","version":1,"exchanges":[{"route":"POST /x","method":"POST","path":"/x",`+
		`"request":{"header":{"Content-Type":["application/json"]},"json":{"a":[1,{"b":"c"}]}},"status":201,`+
		`"response":{"json":{"id":1}}}]}`, "POST", "/x", "application/json", `{"a":[1,{"b":"d"}]}`)
	f.Add(`{"format":"collab-cassette","version":1,"exchanges":[{"route":"POST /u","method":"POST","path":"/u",`+
		`"request":{"header":{"Content-Type":["multipart/form-data; boundary=b"]},"text":"--b\r\n\r\nx\r\n--b--\r\n"},"status":200,`+
		`"response":{"text":"ok"}}]}`, "POST", "/u", "multipart/form-data; boundary=", "--\r\n")
	f.Add(`{"format":"collab-cassette","version":1,"exchanges":[{"route":"GET /q","method":"GET","path":"/q",`+
		`"query":{"a":["1","2"]},"request":{},"status":200,"response":{"base64":"/wA="}}]}`, "GET", "/q?a=1&a=3&token=x", "", "")
	f.Fuzz(func(t *testing.T, text, method, target, contentType, body string) {
		c, err := cassette.Read(strings.NewReader(text))
		if err != nil {
			return
		}
		newReq := func() *http.Request {
			req, err := http.NewRequest(method, "http://r.invalid"+target, strings.NewReader(body))
			if err != nil {
				return nil
			}
			req.Header.Set("Content-Type", contentType)
			return req
		}
		if !strings.HasPrefix(target, "/") || newReq() == nil {
			return
		}
		p := cassette.NewReplayer(c)
		p.ServeHTTP(httptest.NewRecorder(), newReq())
		if resp, err := p.RoundTrip(newReq()); err == nil {
			resp.Body.Close()
		}
		_ = p.Verify()
	})
}
