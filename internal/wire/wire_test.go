package wire

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// argErr stands for the exported error type a caller passes to Route.
type argErr struct{ arg, reason string }

func (e *argErr) Error() string { return e.arg + ": " + e.reason }

func refuse(arg, reason string) error { return &argErr{arg, reason} }

func TestRouteNamesTheRefusedValue(t *testing.T) {
	p, err := Route(refuse, "projects/%s/issues/%s", "g/p.json", 7)
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
		{[]any{1, uint(0)}, "issues id"},
	} {
		_, err := Route(refuse, "projects/%s/issues/%s", tc.args...)
		var ae *argErr
		if !errors.As(err, &ae) || ae.arg != tc.arg || ae.reason == "" {
			t.Errorf("Route(%v): %v, want the caller's error for %s", tc.args, err, tc.arg)
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
// lengths; a secret inside the marker never makes the marker grow; a short
// secret is replaced only where it stands whole, a long one anywhere.
func TestRedactShortAndOverlappingSecrets(t *testing.T) {
	for _, tc := range []struct {
		s       string
		secrets []string
		want    string
	}{
		{"404 Project Not Found", []string{"ct"}, "404 Project Not Found"},
		{"no recorded exchange", []string{"x"}, "no recorded exchange"},
		{"abc", []string{"a"}, "abc"},
		{"aaa", []string{"a"}, "aaa"},
		{"a=a&b=a-1", []string{"a"}, "[redacted]=[redacted]&b=a-1"},
		{"token x.", []string{"x"}, "token [redacted]."},
		{"glued abcdefgh12", []string{"abcdefgh"}, "glued [redacted]12"},
		{"a re b", []string{"re"}, "a [redacted] b"},
		{"x dact y", []string{"dact", "e"}, "x [redacted] y"},
		{"[redacted] x", []string{"[redacted]"}, "[redacted] x"},
		{"r", []string{"r", "e", "d"}, "[redacted]"},
		{"abcd bcd cd", []string{"cd", "bcd", "abcd"}, "[redacted] [redacted] [redacted]"},
		{"tok-1 tok-12 tok-123", []string{"tok-1", "tok-12", "tok-123"}, "[redacted] [redacted] [redacted]"},
		{"a%2Fb a/b", []string{"a/b"}, "[redacted] [redacted]"},
		{"[redacte" + "d]x!", []string{"d]x"}, "[redacted]x!"},
		{"[redacte" + "d]xyzabcdefgh!", []string{"d]xyzabcdefgh"}, "[redacte[redacted]!"},
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

// TestReplace: a long secret is replaced anywhere, a short one only where
// it stands whole.
func TestReplace(t *testing.T) {
	for _, tc := range []struct{ s, secret, want string }{
		{"no recorded exchange x", "x", "no recorded exchange <s>"},
		{"a=x&b=xx&c=x", "x", "a=<s>&b=xx&c=<s>"},
		{"glued abcdefgh12 abcdefgh", "abcdefgh", "glued <s>12 <s>"},
		{"nothing", "", "nothing"},
	} {
		if got := Replace(tc.s, tc.secret, "<s>"); got != tc.want {
			t.Errorf("Replace(%q, %q) = %q, want %q", tc.s, tc.secret, got, tc.want)
		}
	}
}
