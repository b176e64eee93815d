// Package hookpayload builds webhook bodies as deployed 8.9 servers send
// them: the keys of each kind, their JSON types, and the servers' time
// formats. The fake server (collabtest) and catch-up (webhook/catchup) fill
// these types from their own records and encode them once with
// encoding/json, so that a key added or fixed here reaches both.
//
// Every field is written, null when a pointer is nil or a time is zero,
// except those marked omitempty, which the servers leave out in the same
// cases. The package imports only the standard library, so that collabtest,
// which the root package's own tests import, may use it.
package hookpayload

import (
	"strconv"
	"time"
)

// The X-Gitlab-Event values of the kinds built here.
const (
	EventPush         = "Push Hook"
	EventTagPush      = "Tag Push Hook"
	EventIssue        = "Issue Hook"
	EventMergeRequest = "Merge Request Hook"
	EventNote         = "Note Hook"
	EventBuild        = "Build Hook"
)

// ZeroSHA stands for "no commit" in push and build payloads.
const ZeroSHA = "0000000000000000000000000000000000000000"

// Time is a database timestamp, written "2016-06-21 09:14:07 UTC"; the
// zero time is null.
type Time time.Time

// MarshalJSON writes t in UTC, to the second.
func (t Time) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return strconv.AppendQuote(nil, time.Time(t).UTC().Format("2006-01-02 15:04:05 MST")), nil
}

// Date is a due date, written "2016-07-01"; the zero time is null.
type Date time.Time

// MarshalJSON writes the date of d in UTC.
func (d Date) MarshalJSON() ([]byte, error) {
	if time.Time(d).IsZero() {
		return []byte("null"), nil
	}
	return strconv.AppendQuote(nil, time.Time(d).UTC().Format(time.DateOnly)), nil
}

// CommitTime is a committer date, written in RFC 3339 with the offset it
// carries.
type CommitTime time.Time

// MarshalJSON writes t with its own offset, to the second.
func (t CommitTime) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, time.Time(t).Format(time.RFC3339)), nil
}

// Str is s, or nil for "": the servers send null for an empty text column.
func Str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ID is id, or nil for 0: the servers send null for an unset reference.
func ID(id int) *int {
	if id == 0 {
		return nil
	}
	return &id
}

// User is the actor or assignee of issue, merge request and note events.
type User struct {
	Name      *string `json:"name"`
	Username  *string `json:"username"`
	AvatarURL *string `json:"avatar_url"`
}

// ProjectInfo is what payloads tell of a project, in the fields a caller
// has; Project and Repository lay it out as each payload object does.
type ProjectInfo struct {
	Name              string
	Description       string // "" is null
	WebURL            string
	AvatarURL         string // "" is null
	SSHURL, HTTPURL   string // the repository's clone URLs
	Namespace         string // the namespace's display name
	PathWithNamespace string
	DefaultBranch     string // "" (an empty repository) is null
	VisibilityLevel   int
}

// Project is the project object of payloads, with its deprecated copies
// (homepage, url, ssh_url, http_url).
type Project struct {
	Name              string  `json:"name"`
	Description       *string `json:"description"`
	WebURL            string  `json:"web_url"`
	AvatarURL         *string `json:"avatar_url"`
	GitSSHURL         string  `json:"git_ssh_url"`
	GitHTTPURL        string  `json:"git_http_url"`
	Namespace         string  `json:"namespace"`
	VisibilityLevel   int     `json:"visibility_level"`
	PathWithNamespace string  `json:"path_with_namespace"`
	DefaultBranch     *string `json:"default_branch"`
	Homepage          string  `json:"homepage"`
	URL               string  `json:"url"`
	SSHURL            string  `json:"ssh_url"`
	HTTPURL           string  `json:"http_url"`
}

// Project lays p out as the project object.
func (p ProjectInfo) Project() *Project {
	return &Project{
		Name: p.Name, Description: Str(p.Description), WebURL: p.WebURL, AvatarURL: Str(p.AvatarURL),
		GitSSHURL: p.SSHURL, GitHTTPURL: p.HTTPURL, Namespace: p.Namespace, VisibilityLevel: p.VisibilityLevel,
		PathWithNamespace: p.PathWithNamespace, DefaultBranch: Str(p.DefaultBranch),
		Homepage: p.WebURL, URL: p.SSHURL, SSHURL: p.SSHURL, HTTPURL: p.HTTPURL,
	}
}

// Repository is the older, short project object of issue, merge request and
// note events.
type Repository struct {
	Name        string  `json:"name"`
	URL         string  `json:"url"`
	Description *string `json:"description"`
	Homepage    string  `json:"homepage"`
}

// LongRepository is the older project object of push and build events.
type LongRepository struct {
	Repository
	GitHTTPURL      string `json:"git_http_url"`
	GitSSHURL       string `json:"git_ssh_url"`
	VisibilityLevel int    `json:"visibility_level"`
}

// Repository lays p out as the short repository object.
func (p ProjectInfo) Repository() *Repository {
	return &Repository{Name: p.Name, URL: p.SSHURL, Description: Str(p.Description), Homepage: p.WebURL}
}

// LongRepository lays p out as the long repository object.
func (p ProjectInfo) LongRepository() *LongRepository {
	return &LongRepository{Repository: *p.Repository(), GitHTTPURL: p.HTTPURL, GitSSHURL: p.SSHURL, VisibilityLevel: p.VisibilityLevel}
}

// IssueURL is the web page of an issue of the project at projectWebURL.
func IssueURL(projectWebURL string, iid int) string {
	return projectWebURL + "/issues/" + strconv.Itoa(iid)
}

// MergeRequestURL is the web page of a merge request.
func MergeRequestURL(projectWebURL string, iid int) string {
	return projectWebURL + "/merge_requests/" + strconv.Itoa(iid)
}

// NoteURL is the address of comment id on the page at target.
func NoteURL(target string, id int) string { return target + "#note_" + strconv.Itoa(id) }

// Ptr returns a pointer to a copy of v, for the fields that may be null.
func Ptr[T any](v T) *T { return &v }
