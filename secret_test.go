package collab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretPrintsTheMarker: every way of printing or logging a Secret
// shows Redacted, and an empty one shows nothing.
func TestSecretPrintsTheMarker(t *testing.T) {
	const value = "glpat-0123456789"
	s := Secret(value)
	var outs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s"} {
		outs = append(outs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, struct{ T Secret }{s}))
	}
	var logs bytes.Buffer
	slog.New(slog.NewTextHandler(&logs, nil)).Info("m", "s", s)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("m", "s", s)
	outs = append(outs, s.String(), s.GoString(), logs.String())
	for _, out := range outs {
		assert.NotContains(t, out, value)
		assert.NotContains(t, out, fmt.Sprintf("%x", value))
		assert.Contains(t, out, Redacted)
	}
	assert.Equal(t, `"[redacted]"`, s.GoString())
	assert.Empty(t, Secret("").String())
	assert.Equal(t, "{}", fmt.Sprintf("%v", struct{ T Secret }{}))
}

// TestSecretJSON: a Secret encodes as the marker, in a record and alone,
// as JSON and as text; decoding reads the value the server sent.
func TestSecretJSON(t *testing.T) {
	b, err := json.Marshal(Project{ID: 1, RunnersToken: "rt-1"})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"runners_token":"[redacted]"`)
	assert.NotContains(t, string(b), "rt-1")
	b, err = json.Marshal(map[string]Secret{"a": "rt-1", "empty": ""})
	require.NoError(t, err)
	assert.JSONEq(t, `{"a": "[redacted]", "empty": ""}`, string(b))
	text, err := Secret("rt-1").MarshalText()
	require.NoError(t, err)
	assert.Equal(t, Redacted, string(text))

	var p Project
	require.NoError(t, json.Unmarshal([]byte(`{"id": 1, "runners_token": "rt-1"}`), &p))
	assert.Equal(t, Secret("rt-1"), p.RunnersToken, "the server's value is read")
	var s Secret
	require.NoError(t, json.Unmarshal([]byte(`"rt-2"`), &s))
	assert.Equal(t, Secret("rt-2"), s)
}

func TestSecretRedact(t *testing.T) {
	s := Secret("a/b c")
	got := s.Redact("plain a/b c, query " + url.QueryEscape("a/b c") + ", path " + url.PathEscape("a/b c"))
	assert.Equal(t, "plain [redacted], query [redacted], path [redacted]", got)
	assert.Equal(t, "text", Secret("").Redact("text"), "an empty secret redacts nothing")
}
