package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"reflect"

	"github.com/collabsvc/collab"
)

// Build is a build handed to a runner by RequestBuild: what to check out,
// what to run and with which variables.
type Build struct {
	ID                int                   `json:"id"`
	Ref               string                `json:"ref"`
	Tag               bool                  `json:"tag"`
	SHA               string                `json:"sha"`
	Status            string                `json:"status"`
	Name              string                `json:"name"`
	Token             Token                 `json:"token"` // the build token: BUILD-TOKEN for traces and artifacts
	Stage             string                `json:"stage"`
	ProjectID         int                   `json:"project_id"`
	ProjectName       string                `json:"project_name"`
	ArtifactsFile     *collab.ArtifactsFile `json:"artifacts_file,omitempty"`
	Commands          string                `json:"commands"` // one script, lines joined by "\n"
	RepoURL           RepoURL               `json:"repo_url"`
	BeforeSHA         string                `json:"before_sha"`
	AllowGitFetch     bool                  `json:"allow_git_fetch"`
	ArtifactsExpireAt *collab.Time          `json:"artifacts_expire_at,omitempty"`
	Options           BuildOptions          `json:"options"`
	Timeout           int                   `json:"timeout"` // seconds
	Variables         []Variable            `json:"variables"`
	DependsOnBuilds   []DependentBuild      `json:"depends_on_builds"`
}

// LogValue logs a build by its identity only: never its token, its
// repository credentials or its variables.
func (b *Build) LogValue() slog.Value {
	if b == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.Int("id", b.ID), slog.String("name", b.Name), slog.String("stage", b.Stage),
		slog.Int("project_id", b.ProjectID), slog.String("ref", b.Ref), slog.String("sha", b.SHA),
	)
}

// DependentBuild is a build of an earlier stage whose artifacts this build
// may download (with DownloadArtifacts and its own Token).
type DependentBuild struct {
	ID            int                   `json:"id"`
	Ref           string                `json:"ref"`
	Tag           bool                  `json:"tag"`
	SHA           string                `json:"sha"`
	Status        string                `json:"status"`
	Name          string                `json:"name"`
	Token         Token                 `json:"token"`
	Stage         string                `json:"stage"`
	ProjectID     int                   `json:"project_id"`
	ProjectName   string                `json:"project_name"`
	ArtifactsFile *collab.ArtifactsFile `json:"artifacts_file,omitempty"`
}

// Variable is a build variable. Values of variables that are not Public are
// secrets: they are redacted when printed or logged.
type Variable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
}

// Format prints the variable with its value redacted unless it is public.
func (v Variable) Format(f fmt.State, verb rune) {
	val := redacted
	if v.Public {
		val = v.Value
	}
	_, _ = fmt.Fprintf(f, "{Key:%s Value:%s Public:%t}", v.Key, val, v.Public)
}

// LogValue logs the variable with its value redacted unless it is public.
func (v Variable) LogValue() slog.Value {
	val := redacted
	if v.Public {
		val = v.Value
	}
	return slog.GroupValue(slog.String("key", v.Key), slog.String("value", val), slog.Bool("public", v.Public))
}

// BuildOptions are the job's settings from the project's CI configuration.
// The known options are decoded into typed fields when they have the shape
// of release 8.x; Raw keeps every option exactly as sent, so options this
// package does not model, and known ones in a newer shape, are not lost.
type BuildOptions struct {
	Image        string            `json:"image,omitempty"`
	Services     []string          `json:"services,omitempty"`
	Artifacts    *ArtifactsOptions `json:"artifacts,omitempty"`
	Cache        *CacheOptions     `json:"cache,omitempty"`
	Dependencies []string          `json:"dependencies,omitempty"`
	AfterScript  []string          `json:"after_script,omitempty"`

	Raw map[string]json.RawMessage `json:"-"`
}

// ArtifactsOptions says which files to collect as artifacts and when.
type ArtifactsOptions struct {
	Name      string          `json:"name,omitempty"`
	Untracked collab.FlexBool `json:"untracked,omitempty"`
	Paths     []string        `json:"paths,omitempty"`
	When      string          `json:"when,omitempty"` // on_success, on_failure, always
	ExpireIn  string          `json:"expire_in,omitempty"`
}

// CacheOptions says which files to keep between builds.
type CacheOptions struct {
	Key       string          `json:"key,omitempty"`
	Untracked collab.FlexBool `json:"untracked,omitempty"`
	Paths     []string        `json:"paths,omitempty"`
}

// fields pairs each typed option with its key.
func (o *BuildOptions) fields() []struct {
	key string
	ptr any
} {
	return []struct {
		key string
		ptr any
	}{
		{"image", &o.Image}, {"services", &o.Services}, {"artifacts", &o.Artifacts},
		{"cache", &o.Cache}, {"dependencies", &o.Dependencies}, {"after_script", &o.AfterScript},
	}
}

// UnmarshalJSON never fails on the content of an option: a value whose shape
// differs from the typed field is left to Raw. A value that is not an object
// (null, say) gives empty options.
func (o *BuildOptions) UnmarshalJSON(b []byte) error {
	*o = BuildOptions{}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil || raw == nil {
		return nil
	}
	o.Raw = raw
	for _, f := range o.fields() {
		if v, ok := raw[f.key]; ok {
			if err := json.Unmarshal(v, f.ptr); err != nil {
				// Zero the field again: a failed decode may leave it half filled.
				reflect.ValueOf(f.ptr).Elem().SetZero()
			}
		}
	}
	return nil
}

// MarshalJSON writes every option of Raw, and the typed fields. A typed
// field that still holds what its Raw value decodes to keeps the Raw bytes
// exactly (so "untracked": "true" stays a string), as does a zero field
// whose Raw value has a shape this package does not model; a field changed
// since decoding is written from its typed value, and one cleared to its
// zero value is left out.
func (o BuildOptions) MarshalJSON() ([]byte, error) {
	out := make(map[string]json.RawMessage, len(o.Raw)+6)
	for k, v := range o.Raw {
		out[k] = v
	}
	for _, f := range o.fields() {
		cur := reflect.ValueOf(f.ptr).Elem()
		if raw, ok := out[f.key]; ok {
			was := reflect.New(cur.Type())
			err := json.Unmarshal(raw, was.Interface())
			if (err == nil && reflect.DeepEqual(was.Elem().Interface(), cur.Interface())) || (err != nil && cur.IsZero()) {
				continue
			}
		}
		if cur.IsZero() {
			delete(out, f.key)
			continue
		}
		v, err := json.Marshal(cur.Interface())
		if err != nil {
			return nil, err
		}
		out[f.key] = v
	}
	return json.Marshal(out)
}

// Token is a secret credential. It prints and logs as [redacted] with every
// fmt verb and with slog; string(t) and JSON encoding keep the value.
type Token string

// String returns [redacted], never the token.
func (t Token) String() string { return redacted }

// GoString returns [redacted], never the token.
func (t Token) GoString() string { return redacted }

// Format writes [redacted] for every verb.
func (t Token) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue logs [redacted].
func (t Token) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON keeps the value, so a Build can be saved and reloaded.
func (t Token) MarshalJSON() ([]byte, error) { return json.Marshal(string(t)) }

// RepoURL is the repository address to clone. Deployed servers embed the
// build token in it (http://gitlab-ci-token:<token>@host/group/project.git),
// so it prints and logs with the password redacted; string(u) keeps it.
type RepoURL string

// String returns the URL with any password and credential parameter
// redacted.
func (u RepoURL) String() string { return redactRepoURL(string(u)) }

// Format writes the redacted URL for every verb.
func (u RepoURL) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, u.String()) }

// LogValue logs the redacted URL.
func (u RepoURL) LogValue() slog.Value { return slog.StringValue(u.String()) }
