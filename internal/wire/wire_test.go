package wire

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRouteNamesTheRefusedValue(t *testing.T) {
	p, err := Route("projects/%s/issues/%s", "g/p.json", 7)
	if err != nil || p != "projects/g%2Fp%2Ejson/issues/7" {
		t.Fatalf("Route = %q, %v", p, err)
	}
	for _, tc := range []struct {
		args []any
		arg  string
	}{
		{[]any{0, 1}, "projects id"},
		{[]any{"p", -3}, "issues id"},
		{[]any{"", 1}, "projects id"},
		{[]any{1.5, 1}, "projects id"},
	} {
		_, err := Route("projects/%s/issues/%s", tc.args...)
		var ae *ArgError
		if !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("Route(%v): %v, want an *ArgError for %s", tc.args, err, tc.arg)
		}
	}
	if s, err := Segment(uint8(0)); err == nil {
		t.Errorf("Segment(uint8(0)) = %q, want an error", s)
	}
}

func TestRequestSecretsAndRedaction(t *testing.T) {
	form := "token=rt-1&state=running"
	req, err := http.NewRequest(http.MethodPut, "https://h.example/ci/api/v1/builds/1?private_token=pt-2", strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("BUILD-TOKEN", "bt-3")
	req.Header.Set("Authorization", "Bearer oa-4")
	req.Header.Set("SUDO", "alice")
	secrets := RequestSecrets(req)
	text := "rt-1 pt-2 bt-3 oa-4 alice"
	got := Redacted(errors.New(text), secrets).Error()
	if strings.ContainsAny(got, "1234") || !strings.Contains(got, "alice") {
		t.Errorf("redacted %q to %q with %q", text, got, secrets)
	}
	if b, _ := io.ReadAll(req.Body); string(b) != form {
		t.Errorf("the body was consumed: %q", b)
	}
	cause := io.ErrUnexpectedEOF
	if !errors.Is(Redacted(cause, secrets), cause) {
		t.Error("Redacted does not unwrap to its cause")
	}
	if Redacted(nil, secrets) != nil {
		t.Error("Redacted(nil) is not nil")
	}
	u, _ := url.Parse("https://u:p@h.example/x?Token=t&a=b")
	if got := RedactURL(u); got != "https://h.example/x?Token="+Marker+"&a=b" {
		t.Errorf("RedactURL = %q", got)
	}
}

// TestRedactShortAndOverlappingSecrets: one pass, whatever the secrets'
// lengths; a secret inside the marker never makes the marker grow.
func TestRedactShortAndOverlappingSecrets(t *testing.T) {
	for _, tc := range []struct {
		s       string
		secrets []string
		want    string
	}{
		{"404 Project Not Found", []string{"ct"}, "404 Proje[redacted] Not Found"},
		{"abc", []string{"a"}, "[redacted]bc"},
		{"aaa", []string{"a"}, "[redacted][redacted][redacted]"},
		{"a re b", []string{"re"}, "a [redacted] b"},
		{"x dact y", []string{"dact", "e"}, "x [redacted] y"},
		{"[redacted] x", []string{"[redacted]"}, "[redacted] x"},
		{"r", []string{"r", "e", "d"}, "[redacted]"},
		{"abcd bcd cd", []string{"cd", "bcd", "abcd"}, "[redacted] [redacted] [redacted]"},
		{"tok-1 tok-12 tok-123", []string{"tok-1", "tok-12", "tok-123"}, "[redacted] [redacted] [redacted]"},
		{"a%2Fb a/b", []string{"a/b"}, "[redacted] [redacted]"},
		{"[redacte" + "d]x!", []string{"d]x"}, "[redacte[redacted]!"},
		{"nothing here", []string{"zz", ""}, "nothing here"},
	} {
		got := Redact(tc.s, tc.secrets)
		if got != tc.want {
			t.Errorf("Redact(%q, %q) = %q, want %q", tc.s, tc.secrets, got, tc.want)
		}
		if again := Redact(got, tc.secrets); again != got {
			t.Errorf("Redact is not stable on %q: %q", got, again)
		}
		if safe := SafeText(tc.s, tc.secrets, MaxMessage); safe != tc.want {
			t.Errorf("SafeText(%q, %q) = %q, want %q", tc.s, tc.secrets, safe, tc.want)
		}
	}
}
