package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScenario plays the scenario against the embedded fake server and
// checks what the bot did.
func TestScenario(t *testing.T) {
	t.Setenv("COLLAB_URL", "")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`bot: #1 "Crash on save": labelled ~needs-triage and commented`,
		`bot: #2 "Search is slow" already has labels performance: left alone`,
		"bot: #1 closed on /close from @alice",
		"bot: !1: build rspec (#",
		"#1 is closed with labels [needs-triage]",
		"1 duplicate suppressed, 0 dropped, 0 failed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
