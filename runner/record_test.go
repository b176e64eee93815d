package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep/jsonkeeptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newerOptionsBuild is a register answer with the shapes later servers
// send: image and services as objects, booleans as strings, no artifacts
// file, unknown options and an empty dependency list.
const newerOptionsBuild = `{
  "id": 2301, "ref": "main", "tag": false, "sha": "0b4bc9a49b562e85de7cc9e834518ea6828729b9",
  "status": "running", "name": "build", "token": "bt-77aa01", "stage": "build",
  "project_id": 7, "project_name": "Gizmo", "commands": "make",
  "repo_url": "http://gitlab-ci-token:bt-77aa01@collab.example.com/acme/gizmo.git",
  "before_sha": "5b1d4e0c3f09d2cc1a3e8a2c1e0a9d0f2e3b4c5d", "allow_git_fetch": false,
  "options": {
    "image": {"name": "golang:1.23", "entrypoint": [""]},
    "services": [{"name": "postgres:16", "alias": "db"}],
    "artifacts": {"paths": ["bin/"], "untracked": "false", "when": "on_failure"},
    "cache": {"key": "go", "untracked": "true", "paths": []},
    "dependencies": [],
    "after_script": ["echo done"],
    "interruptible": true
  },
  "timeout": 600,
  "variables": [{"key": "GOFLAGS", "value": "-mod=mod", "public": true}],
  "depends_on_builds": []
}`

// TestBuildRoundTrip decodes full runner build records (the register
// answer, the artifacts-upload answer, and the newer shapes) into Build,
// encodes the Build again, and checks that every key of the input is in the
// output with the same value, order aside. Two comparisons are canonical
// rather than textual: a time is compared as an instant (the output uses
// RFC 3339 with the same instant), and a boolean sent as a string ("true")
// may come back as a JSON boolean. Typed options keep their input bytes, so
// the options compare exactly.
func TestBuildRoundTrip(t *testing.T) {
	inputs := map[string][]byte{"newer options": []byte(newerOptionsBuild)}
	for _, name := range []string{"register.json", "artifacts-upload.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		inputs[name] = b
	}
	for name, in := range inputs {
		var b Build
		require.NoError(t, json.Unmarshal(in, &b), name)
		out, err := json.Marshal(&b)
		require.NoError(t, err, name)
		var want, got any
		require.NoError(t, json.Unmarshal(in, &want))
		require.NoError(t, json.Unmarshal(out, &got))
		for _, diff := range jsonKept("", want, got) {
			t.Errorf("%s: %s", name, diff)
		}
		jsonkeeptest.AssertReadsBack(t, &b, out, json.Unmarshal)

		// A key no record knows, at every level, survives as well.
		marked, err := json.Marshal(jsonkeeptest.WithKeyEverywhere(want))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(marked, &b), name)
		out, err = json.Marshal(&b)
		require.NoError(t, err, name)
		require.NoError(t, json.Unmarshal(marked, &want))
		got = nil
		require.NoError(t, json.Unmarshal(out, &got))
		for _, diff := range jsonKept("", want, got) {
			t.Errorf("%s, with an unknown key: %s", name, diff)
		}
	}
}

// TestRegistrationKeepsKeys: a registration answer round-trips with a key
// it does not know.
func TestRegistrationKeepsKeys(t *testing.T) {
	in := `{"id": 77, "token": "rt-not-a-secret", "description": "build box"}`
	var r Registration
	require.NoError(t, json.Unmarshal([]byte(in), &r))
	assert.Equal(t, 77, r.ID)
	assert.JSONEq(t, `"build box"`, string(r.Extra["description"]))
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, strings.Replace(in, "rt-not-a-secret", collab.Redacted, 1), string(out), "the token is written redacted")
}

// TestUploadAnswerKeysAreTyped: every key the artifacts-upload answer
// carries (the runner's full build record) is a typed field of Build, not
// only kept by chance: each is set from the test data and written back.
func TestUploadAnswerKeysAreTyped(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "artifacts-upload.json"))
	require.NoError(t, err)
	var b Build
	require.NoError(t, json.Unmarshal(in, &b))
	keys := []string{"id", "ref", "tag", "sha", "status", "name", "token", "stage", "project_id", "project_name",
		"artifacts_file", "commands", "repo_url", "before_sha", "allow_git_fetch", "artifacts_expire_at", "options",
		"timeout", "variables", "depends_on_builds"}
	var fields map[string]json.RawMessage
	out, err := json.Marshal(b)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(out, &fields))
	for _, k := range keys {
		assert.Contains(t, fields, k)
	}
	assert.NotZero(t, b.SHA)
	assert.NotZero(t, b.ProjectID)
	assert.NotZero(t, b.ProjectName)
	assert.NotZero(t, b.Commands)
	assert.NotZero(t, b.RepoURL)
	assert.NotZero(t, b.BeforeSHA)
	assert.True(t, b.AllowGitFetch)
	assert.NotZero(t, b.Token)
	assert.NotNil(t, b.ArtifactsExpireAt)
	assert.NotZero(t, b.Options.Image)
	assert.NotZero(t, b.Timeout)
	assert.NotEmpty(t, b.Variables)
	assert.NotEmpty(t, b.DependsOnBuilds)
}

// TestBuildOptionsEncodeChanges: a typed option changed after decoding is
// written from its new value, one cleared is written as what it holds now,
// and every option is written.
func TestBuildOptionsEncodeChanges(t *testing.T) {
	var o BuildOptions
	require.NoError(t, json.Unmarshal([]byte(`{"image":"ruby:2.3","services":["redis"],"cache":{"untracked":"true"},"x":1}`), &o))
	o.Image = "ruby:3.3"
	o.Services = nil
	out, err := json.Marshal(o)
	require.NoError(t, err)
	assert.JSONEq(t, `{"image":"ruby:3.3","services":null,"artifacts":null,"cache":{"key":"","untracked":true,"paths":null},
		"dependencies":null,"after_script":null,"x":1}`, string(out))

	out, err = json.Marshal(BuildOptions{Dependencies: []string{"a"}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"image":"","services":null,"artifacts":null,"cache":null,"dependencies":["a"],"after_script":null}`, string(out))
}

// jsonKept lists how got fails to keep every key and value of want.
func jsonKept(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var diffs []string
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: key lost", path, k))
				continue
			}
			diffs = append(diffs, jsonKept(path+"."+k, w[k], gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, jsonKept(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	case string:
		if g, ok := got.(bool); ok {
			if b, err := strconv.ParseBool(w); err == nil && b == g {
				return nil
			}
		}
		if g, ok := got.(string); ok {
			if g == w || g == collab.Redacted || g == redactRepoURL(w) {
				return nil // a credential is written redacted
			}
			wt, err1 := time.Parse(time.RFC3339Nano, w)
			gt, err2 := time.Parse(time.RFC3339Nano, g)
			if err1 == nil && err2 == nil && wt.Equal(gt) {
				return nil
			}
		}
	default:
		if fmt.Sprint(want) == fmt.Sprint(got) {
			return nil
		}
	}
	return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
}

// A build prints by its identity: neither its token nor keys a newer
// server may add, such as credentials, reach a log line or an error.
func TestBuildPrintsIdentityOnly(t *testing.T) {
	var b Build
	require.NoError(t, json.Unmarshal([]byte(`{"id":7,"name":"rspec","token":"build-secret","credentials":{"password":"hunter2"}}`), &b))
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{b, &b} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, "build-secret", verb)
			assert.NotContains(t, out, "hunter2", verb)
			assert.Contains(t, out, "rspec", verb)
		}
	}
}
