package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep"
)

// BuildInfo is what a build and the builds it depends on share: which
// build it is, of which commit, and its token and artifacts.
type BuildInfo struct {
	ID            int                   `json:"id"`
	Ref           string                `json:"ref"`
	Tag           bool                  `json:"tag"`
	SHA           string                `json:"sha"`
	Status        collab.BuildStatus    `json:"status"`
	Name          string                `json:"name"`
	Token         collab.Secret         `json:"token"` // the build token: BUILD-TOKEN for traces and artifacts
	Stage         string                `json:"stage"`
	ProjectID     int                   `json:"project_id"`
	ProjectName   string                `json:"project_name"`
	ArtifactsFile *collab.ArtifactsFile `json:"artifacts_file,omitempty"`
}

// Build is a build handed to a runner by RequestBuild: what to check out,
// what to run and with which variables.
type Build struct {
	BuildInfo
	Commands          string           `json:"commands"` // one script, lines joined by "\n"
	RepoURL           RepoURL          `json:"repo_url"`
	BeforeSHA         string           `json:"before_sha"`
	AllowGitFetch     bool             `json:"allow_git_fetch"`
	ArtifactsExpireAt *collab.Time     `json:"artifacts_expire_at,omitempty"`
	Options           BuildOptions     `json:"options" jsonkeep:"quiet"` // options of other shapes stay in Options.Extra
	Timeout           int              `json:"timeout"`                  // seconds
	Variables         []Variable       `json:"variables"`
	DependsOnBuilds   []DependentBuild `json:"depends_on_builds"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
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

// Format prints a build by its identity only, as LogValue logs it: its
// unknown keys (Extra) may hold credentials of a newer server.
func (b Build) Format(f fmt.State, verb rune) {
	_, _ = fmt.Fprintf(f, "{ID:%d Name:%s Stage:%s ProjectID:%d Ref:%s SHA:%s}", b.ID, b.Name, b.Stage, b.ProjectID, b.Ref, b.SHA)
}

// DependentBuild is a build of an earlier stage whose artifacts this build
// may download (with DownloadArtifacts and its own Token).
type DependentBuild struct {
	BuildInfo

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Variable is a build variable. Values of variables that are not Public are
// secrets: they are redacted when printed or logged.
type Variable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`

	// Extra holds the keys this package does not know, verbatim. The tag
	// has the records holding a variable write it with its own MarshalJSON,
	// which redacts.
	Extra map[string]json.RawMessage `json:"-" jsonkeep:"marshal"`
}

// Format prints the variable with its value redacted unless it is public.
func (v Variable) Format(f fmt.State, verb rune) {
	val := redacted
	if v.Public {
		val = v.Value
	}
	_, _ = fmt.Fprintf(f, "{Key:%s Value:%s Public:%t}", v.Key, val, v.Public)
}

// MarshalJSON writes the variable with its value redacted unless it is
// public, as it prints: a secret variable often holds the build token.
func (v Variable) MarshalJSON() ([]byte, error) {
	if !v.Public && v.Value != "" {
		v.Value = redacted
	}
	return jsonkeep.Encode(&v)
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
// of release 8.x. Extra keeps, verbatim, the options this package does not
// model and known ones in a newer shape (such as an image given as an
// object), so nothing is lost when the options are encoded again.
type BuildOptions struct {
	Image        string            `json:"image,omitempty"`
	Services     []string          `json:"services,omitempty"`
	Artifacts    *ArtifactsOptions `json:"artifacts,omitempty"`
	Cache        *CacheOptions     `json:"cache,omitempty"`
	Dependencies []string          `json:"dependencies,omitempty"`
	AfterScript  []string          `json:"after_script,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ArtifactsOptions says which files to collect as artifacts and when.
type ArtifactsOptions struct {
	Name      string   `json:"name,omitempty"`
	Untracked bool     `json:"untracked,omitempty"` // some servers send "true"
	Paths     []string `json:"paths,omitempty"`
	When      string   `json:"when,omitempty"` // on_success, on_failure, always
	ExpireIn  string   `json:"expire_in,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CacheOptions says which files to keep between builds.
type CacheOptions struct {
	Key       string   `json:"key,omitempty"`
	Untracked bool     `json:"untracked,omitempty"` // some servers send "true"
	Paths     []string `json:"paths,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON never fails on the content of an option: a value whose shape
// differs from the typed field is kept in Extra, as it is when the options
// are read as part of a Build. A value that is not an object (null, say)
// gives empty options.
func (o *BuildOptions) UnmarshalJSON(b []byte) error {
	err := jsonkeep.Decode(b, o)
	var kept jsonkeep.Errors
	if err != nil && !errors.As(err, &kept) {
		*o = BuildOptions{}
	}
	return nil
}

// RepoURL is the repository address to clone. Deployed servers embed the
// build token in it (http://gitlab-ci-token:<token>@host/group/project.git),
// so it prints, logs and encodes (as JSON or text) with the password
// redacted; string(u) keeps it.
type RepoURL string

// String returns the URL with any password and credential parameter
// redacted.
func (u RepoURL) String() string { return redactRepoURL(string(u)) }

// Format writes the redacted URL for every verb.
func (u RepoURL) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, u.String()) }

// LogValue logs the redacted URL.
func (u RepoURL) LogValue() slog.Value { return slog.StringValue(u.String()) }

// MarshalText returns the redacted URL, which JSON writes in u's place.
func (u RepoURL) MarshalText() ([]byte, error) { return []byte(u.String()), nil }
