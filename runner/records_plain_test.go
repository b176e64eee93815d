package runner

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep/jsonkeeptest"
	"github.com/stretchr/testify/require"
)

// A recordCase is one record type of this package: a body as the servers
// send it, and the value it decodes to, built in code from exported fields.
type recordCase struct {
	name string // the type's name
	body string
	want any // a pointer to the record
}

// recordCases has a case for every record type of this package;
// TestEveryRecordHasACase fails when one is missing.
var recordCases = []recordCase{
	{"Build", `{"id": 1187, "ref": "v1.4.0", "tag": true, "sha": "a91957a858320c0e17f3a0eca7cfacbff50ea29a", "status": "running", "name": "rspec:unit", "token": "bt-3f9a1c77e2d04b5c", "stage": "test", "project_id": 42, "project_name": "Widget Factory", "artifacts_file": {"filename": "artifacts.zip", "size": 1048576}, "commands": "bundle exec rspec spec/unit", "repo_url": "https://gitlab-ci-token:bt-3f9a1c77e2d04b5c@collab.example.com/acme/widget-factory.git", "before_sha": "0000000000000000000000000000000000000000", "allow_git_fetch": true, "artifacts_expire_at": "2016-07-29T10:15:00.000+00:00", "options": {"image": "ruby:2.3", "services": ["postgres:9.5"], "artifacts": {"name": "report", "paths": ["coverage/"], "when": "always", "expire_in": "7 days"}, "cache": {"key": "v1", "untracked": "true", "paths": ["vendor/bundle"]}, "dependencies": ["build:gems"], "after_script": ["rm -rf tmp"], "retry_hint": {"max": 2}}, "timeout": 3600, "variables": [{"key": "CI", "value": "true", "public": true}, {"key": "DATABASE_PASSWORD", "value": "hunter2", "public": false}], "depends_on_builds": [{"id": 1185, "ref": "v1.4.0", "tag": true, "sha": "a91957a858320c0e17f3a0eca7cfacbff50ea29a", "status": "success", "name": "build:gems", "token": "bt-3f9a1c77e2d04b5c", "stage": "build", "project_id": 42, "project_name": "Widget Factory", "artifacts_file": {"filename": "gems.zip", "size": 2048}}], "trigger_request_id": null}`,
		&Build{
			BuildInfo: BuildInfo{
				ID:            1187,
				Ref:           "v1.4.0",
				Tag:           true,
				SHA:           "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
				Status:        collab.BuildRunning,
				Name:          "rspec:unit",
				Token:         collab.Secret("bt-3f9a1c77e2d04b5c"),
				Stage:         "test",
				ProjectID:     42,
				ProjectName:   "Widget Factory",
				ArtifactsFile: &collab.ArtifactsFile{Filename: "artifacts.zip", Size: 1048576},
			},
			Commands:          "bundle exec rspec spec/unit",
			RepoURL:           RepoURL("https://gitlab-ci-token:bt-3f9a1c77e2d04b5c@collab.example.com/acme/widget-factory.git"),
			BeforeSHA:         "0000000000000000000000000000000000000000",
			AllowGitFetch:     true,
			ArtifactsExpireAt: collab.Ptr(at(2016, 7, 29, 10, 15, 0, 0, 0)),
			Options: BuildOptions{
				Image:        "ruby:2.3",
				Services:     []string{"postgres:9.5"},
				Artifacts:    &ArtifactsOptions{Name: "report", Paths: []string{"coverage/"}, When: "always", ExpireIn: "7 days"},
				Cache:        &CacheOptions{Key: "v1", Untracked: true, Paths: []string{"vendor/bundle"}},
				Dependencies: []string{"build:gems"},
				AfterScript:  []string{"rm -rf tmp"},
				Extra:        map[string]json.RawMessage{"retry_hint": json.RawMessage(`{"max":2}`)},
			},
			Timeout:   3600,
			Variables: []Variable{{Key: "CI", Value: "true", Public: true}, {Key: "DATABASE_PASSWORD", Value: "hunter2"}},
			DependsOnBuilds: []DependentBuild{{BuildInfo: BuildInfo{
				ID:            1185,
				Ref:           "v1.4.0",
				Tag:           true,
				SHA:           "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
				Status:        collab.BuildSuccess,
				Name:          "build:gems",
				Token:         collab.Secret("bt-3f9a1c77e2d04b5c"),
				Stage:         "build",
				ProjectID:     42,
				ProjectName:   "Widget Factory",
				ArtifactsFile: &collab.ArtifactsFile{Filename: "gems.zip", Size: 2048},
			}}},
			Extra: map[string]json.RawMessage{"trigger_request_id": json.RawMessage(`null`)},
		}},
	{"DependentBuild", `{"id": 1186, "ref": "v1.4.0", "tag": true, "sha": "a91957a858320c0e17f3a0eca7cfacbff50ea29a", "status": "success", "name": "lint", "token": "bt-3f9a1c77e2d04b5c", "stage": "build", "project_id": 42, "project_name": "Widget Factory", "artifacts_file": null}`,
		&DependentBuild{BuildInfo: BuildInfo{
			ID:          1186,
			Ref:         "v1.4.0",
			Tag:         true,
			SHA:         "a91957a858320c0e17f3a0eca7cfacbff50ea29a",
			Status:      collab.BuildSuccess,
			Name:        "lint",
			Token:       collab.Secret("bt-3f9a1c77e2d04b5c"),
			Stage:       "build",
			ProjectID:   42,
			ProjectName: "Widget Factory",
		}}},
	{"Variable", `{"key": "CI_BUILD_REF", "value": "a91957a858320c0e17f3a0eca7cfacbff50ea29a", "public": true}`,
		&Variable{Key: "CI_BUILD_REF", Value: "a91957a858320c0e17f3a0eca7cfacbff50ea29a", Public: true}},
	{"BuildOptions", `{"image": {"name": "ruby:2.3", "entrypoint": [""]}, "services": ["postgres:9.5", "redis:3"], "artifacts": {"paths": ["rspec.xml"], "when": "on_failure"}, "cache": {"key": "v1.4.0", "paths": ["vendor/bundle"]}, "dependencies": [], "after_script": ["rm -rf tmp/cache"]}`,
		&BuildOptions{
			Services:     []string{"postgres:9.5", "redis:3"},
			Artifacts:    &ArtifactsOptions{Paths: []string{"rspec.xml"}, When: "on_failure"},
			Cache:        &CacheOptions{Key: "v1.4.0", Paths: []string{"vendor/bundle"}},
			Dependencies: []string{},
			AfterScript:  []string{"rm -rf tmp/cache"},
			Extra:        map[string]json.RawMessage{"image": json.RawMessage(`{"name":"ruby:2.3","entrypoint":[""]}`)},
		}},
	{"ArtifactsOptions", `{"name": "rspec-report", "untracked": false, "paths": ["coverage/", "rspec.xml"], "when": "always", "expire_in": "7 days"}`,
		&ArtifactsOptions{Name: "rspec-report", Paths: []string{"coverage/", "rspec.xml"}, When: "always", ExpireIn: "7 days"}},
	{"CacheOptions", `{"key": "v1.4.0", "untracked": true, "paths": ["vendor/bundle"], "policy": "pull"}`,
		&CacheOptions{Key: "v1.4.0", Untracked: true, Paths: []string{"vendor/bundle"}, Extra: map[string]json.RawMessage{"policy": json.RawMessage(`"pull"`)}}},
	{"Registration", `{"id": 77, "token": "rt-6c1f0a9e3b7d4e21"}`,
		&Registration{ID: 77, Token: collab.Secret("rt-6c1f0a9e3b7d4e21")}},
}

// at is a timestamp as decoding gives it: UTC for a zero offset, and an
// unnamed fixed zone for another.
func at(year, month, day, hour, minute, sec, nsec, offset int) collab.Time {
	loc := time.UTC
	if offset != 0 {
		loc = time.FixedZone("", offset)
	}
	return collab.Time{Time: time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)}
}

// TestRecordsArePlainValues: for every record type, a decoded body equals
// the same value built in code under testify, cmp and reflect.DeepEqual;
// both encode to the same JSON; the encoding keeps every key and value of
// the body, and decodes to an equal value again.
func TestRecordsArePlainValues(t *testing.T) {
	for _, rc := range recordCases {
		t.Run(rc.name, func(t *testing.T) {
			require.Equal(t, rc.name, reflect.TypeOf(rc.want).Elem().Name())
			_, out := jsonkeeptest.AssertPlainValue(t, rc.want, []byte(rc.body))
			var in, back any
			require.NoError(t, json.Unmarshal([]byte(rc.body), &in))
			require.NoError(t, json.Unmarshal(out, &back))
			for _, diff := range jsonKept("", in, back) {
				t.Error(diff)
			}
		})
	}
}

// TestEveryRecordHasACase lists the record types of the package's source
// and checks that each has a case.
func TestEveryRecordHasACase(t *testing.T) {
	var have []string
	for _, rc := range recordCases {
		have = append(have, rc.name)
	}
	jsonkeeptest.AssertEveryRecordHasACase(t, ".", have)
}
