// Package suite holds what the test suites share: a Recorder of error texts
// and log lines checked for secrets, a goroutine-leak check in Main, and
// Sweep with NewEchoServer, which call every method of a client against a
// server that repeats each request in its errors. The SDK itself has no hook
// for tests: the suites look at what it returns and logs. Only test
// binaries import this package.
package suite

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// Recorder collects error texts (given to Record) and log lines (written to
// it as a log handler's output) and checks that none holds a secret: one
// registered with Secret, or one matching the pattern given to NewRecorder.
type Recorder struct {
	pattern *regexp.Regexp

	mu      sync.Mutex
	lines   []string
	secrets map[string]bool
}

// NewRecorder returns a Recorder that knows secrets, and also flags text
// matching pattern (which may be nil).
func NewRecorder(pattern *regexp.Regexp, secrets ...string) *Recorder {
	r := &Recorder{pattern: pattern, secrets: map[string]bool{}}
	for _, s := range secrets {
		r.secrets[s] = true
	}
	return r
}

// Record keeps one error text or log line.
func (r *Recorder) Record(s string) {
	r.mu.Lock()
	r.lines = append(r.lines, s)
	r.mu.Unlock()
}

// Write lets a Recorder be a log handler's output.
func (r *Recorder) Write(p []byte) (int, error) {
	r.Record(string(p))
	return len(p), nil
}

// Secret registers a secret in use and returns it.
func (r *Recorder) Secret(s string) string {
	r.mu.Lock()
	r.secrets[s] = true
	r.mu.Unlock()
	return s
}

// Lines returns everything recorded so far.
func (r *Recorder) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// Check reports the first recorded line that holds a secret, without
// printing the secret itself.
func (r *Recorder) Check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, line := range r.lines {
		for s := range r.secrets {
			if strings.Contains(line, s) {
				return fmt.Errorf("secret check: a token appears in %q", strings.ReplaceAll(line, s, "[TOKEN]"))
			}
		}
		if r.pattern != nil && r.pattern.MatchString(line) {
			return fmt.Errorf("secret check: a token appears in %q", r.pattern.ReplaceAllString(line, "[TOKEN]"))
		}
	}
	return nil
}

// Main runs a test suite, then fails it if r recorded a secret or a
// goroutine outlived the tests. Use it as TestMain. r sees what the suite
// gives it: the log lines of clients whose logger writes to r, and the
// errors a test passes to Record (see Sweep for every method at once).
func Main(m *testing.M, r *Recorder) {
	code := m.Run()
	if code == 0 {
		if err := r.Check(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
