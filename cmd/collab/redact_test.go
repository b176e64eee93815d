package main

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestIncludeRedactsEscapedToken: --include hides the token also where a
// server echoes it URL- or HTML-escaped, as the client's own errors do.
func TestIncludeRedactsEscapedToken(t *testing.T) {
	const token = "tok/en+1&x"
	var out strings.Builder
	resp := &http.Response{Proto: "HTTP/1.1", Status: "200 OK", Header: http.Header{
		"X-Plain": {token}, "X-Query": {url.QueryEscape(token)}, "X-Path": {url.PathEscape(token)}, "X-Html": {html.EscapeString(token)},
	}}
	includePrinter(&out, token)(resp)
	for _, form := range []string{token, url.QueryEscape(token), url.PathEscape(token), html.EscapeString(token)} {
		if strings.Contains(out.String(), form) {
			t.Errorf("%q shows in:\n%s", form, out.String())
		}
	}
	if n := strings.Count(out.String(), "[redacted]"); n != 4 {
		t.Errorf("%d markers, want 4:\n%s", n, out.String())
	}
	out.Reset()
	includePrinter(&out, "")(resp)
	if !strings.Contains(out.String(), token) {
		t.Errorf("no token, nothing redacted:\n%s", out.String())
	}
}

// TestIncludeKeepsWordsAroundAShortToken: a token of one character is
// hidden where it stands whole, and the words that hold its letter are
// printed as they came.
func TestIncludeKeepsWordsAroundAShortToken(t *testing.T) {
	var out strings.Builder
	resp := &http.Response{Proto: "HTTP/1.1", Status: "501 Not Implemented", Header: http.Header{
		"X-Message": {"no recorded exchange"}, "X-Token": {"x"}, "Link": {"<https://h.example/p?private_token=x&page=2>; rel=\"next\""},
	}}
	includePrinter(&out, "x")(resp)
	for _, want := range []string{"X-Message: no recorded exchange", "X-Token: [redacted]", "private_token=[redacted]&page=2>; rel=\"next\""} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}
