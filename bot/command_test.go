package bot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCommands(t *testing.T) {
	cases := []struct {
		name, note string
		want       []Command
	}{
		{"one", "/label bug", []Command{{"label", []string{"bug"}, 1}}},
		{"no args", "/close", []Command{{"close", nil, 1}}},
		{"several, one per line", "Thanks!\n/label bug ui\n  /assign @bob\r\n/close",
			[]Command{{"label", []string{"bug", "ui"}, 2}, {"assign", []string{"@bob"}, 3}, {"close", nil, 4}}},
		{"case and blanks", "\t/LABEL   bug\t p1  ", nil}, // a tab indents code
		{"leading spaces", "   /LABEL   bug\t p1  ", []Command{{"label", []string{"bug", "p1"}, 1}}},
		{"double quotes", `/label "needs review" bug`, []Command{{"label", []string{"needs review", "bug"}, 1}}},
		{"escapes in double quotes", `/say "a \"b\" c\\d" e\f`, []Command{{"say", []string{`a "b" c\d`, `e\f`}, 1}}},
		{"single quotes keep all", `/say 'it "is" \n' x`, []Command{{"say", []string{`it "is" \n`, "x"}, 1}}},
		{"quotes join a word", `/label area:"front end"`, []Command{{"label", []string{"area:front end"}, 1}}},
		{"empty quotes", `/label "" x`, []Command{{"label", []string{"", "x"}, 1}}},
		{"unclosed quote", `/label "needs review`, []Command{{"label", []string{"needs review"}, 1}}},
		{"fenced code", "```\n/close\n```\n/label bug", []Command{{"label", []string{"bug"}, 4}}},
		{"tilde fence, longer close", "~~~sh\n/close\n~~~~\n/reopen", []Command{{"reopen", nil, 4}}},
		{"other fence inside", "```\n~~~\n/close\n```\n/x", []Command{{"x", nil, 5}}},
		{"unclosed fence", "```\n/close", nil},
		{"indented code", "    /close", nil},
		{"quoted line", "> /close", nil},
		{"mid-line", "please /close this", nil},
		{"paths are not commands", "/usr/bin/env\n/tmp", []Command{{"tmp", nil, 2}}},
		{"slash alone", "/\n/ label", nil},
		{"non-ASCII name", "/étiquette x", nil},
		{"empty", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ParseCommands(tc.note))
		})
	}
}

// TestNoteCommands: what a note event runs, through the bot: registered
// commands in order, with their arguments; unknown commands, the bot's own
// notes, system notes and commit comments run nothing.
func TestNoteCommands(t *testing.T) {
	b := &Bot{opts: Options{Client: mustClient(t)}, commands: map[string][]func(context.Context, *Note, Command) error{}}
	b.me = &collab.UserDetails{User: collab.User{ID: 1, Username: "triage-bot"}}
	var ran []string
	for _, name := range []string{"label", "close"} {
		b.Command(name, func(_ context.Context, n *Note, c Command) error {
			ran = append(ran, c.Name+"("+strings.Join(c.Args, ",")+")")
			return nil
		})
	}
	cases := []struct {
		name, user string
		author     int
		on, note   string
		system     bool
		want       []string
	}{
		{"several", "bob", 2, "issue", "/label bug \"needs review\"\n/close", false, []string{"label(bug,needs review)", "close()"}},
		{"unknown commands", "bob", 2, "issue", "/shrug\n/label x\n/LABEL y", false, []string{"label(x)", "label(y)"}},
		{"the bot's own note, by name", "triage-bot", 2, "issue", "/close", false, nil},
		{"the bot's own note, by author id", "", 1, "merge_request", "/close", false, nil},
		{"on a merge request", "bob", 2, "merge_request", "/close", false, []string{"close()"}},
		{"system note", "bob", 2, "issue", "/close", true, nil},
		{"commit comment", "bob", 2, "commit", "/close", false, nil},
		{"code block", "bob", 2, "issue", "```\n/close\n```", false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ran = nil
			body := map[string]any{"object_kind": "note", "project_id": 5,
				"object_attributes": map[string]any{"id": 9, "note": tc.note, "author_id": tc.author, "system": tc.system}}
			if tc.user != "" {
				body["user"] = map[string]any{"username": tc.user}
			}
			if tc.on != "commit" {
				body[tc.on] = map[string]any{"id": 7, "iid": 3}
			}
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			var ev webhook.NoteEvent
			require.NoError(t, json.Unmarshal(raw, &ev))
			require.NoError(t, b.onNote(context.Background(), &ev))
			assert.Equal(t, tc.want, ran)
		})
	}
}

func mustClient(t *testing.T) *collab.Client {
	t.Helper()
	c, err := collab.NewClient("http://127.0.0.1:1", collab.WithPrivateToken("x"))
	require.NoError(t, err)
	return c
}
