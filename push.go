package collab

import "encoding/json"

// PushData is what the server records about a push: the data of a "pushed
// to" project event, and the body of the Push Hook and Tag Push Hook
// webhooks. Project events carry only part of these keys; webhooks carry all
// of them.
//
// Every type here keeps the keys it does not know in Extra, and encodes
// every field and every Extra key.
type PushData struct {
	ObjectKind string `json:"object_kind"` // "push" or "tag_push"
	EventName  string `json:"event_name"`  // same as ObjectKind
	// Before and After are commit ids; Before is 40 zeros when the branch or
	// tag is created, After when it is deleted. For an annotated tag After is
	// the tag object, not the commit.
	Before string `json:"before"`
	After  string `json:"after"`
	Ref    string `json:"ref"` // "refs/heads/<branch>" or "refs/tags/<tag>"
	// CheckoutSHA is the commit After resolves to; nil on deletion.
	CheckoutSHA *string `json:"checkout_sha"`
	// Message is the annotation of a newly created annotated tag, else nil.
	Message    *string      `json:"message"`
	UserID     int          `json:"user_id"`
	UserName   string       `json:"user_name"`
	UserEmail  string       `json:"user_email"`
	UserAvatar *string      `json:"user_avatar"`
	ProjectID  int          `json:"project_id"`
	Project    *HookProject `json:"project"`
	// Commits are the last 20 pushed commits, oldest first.
	Commits []*PushCommit `json:"commits"`
	// TotalCommitsCount counts every pushed commit and can exceed 20.
	TotalCommitsCount int `json:"total_commits_count"`
	// Repository is an older copy of part of Project.
	Repository *HookRepository `json:"repository"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// HookProject is the project as webhooks describe it.
type HookProject struct {
	Name              string          `json:"name"`
	Description       *string         `json:"description"`
	WebURL            string          `json:"web_url"`
	AvatarURL         *string         `json:"avatar_url"`
	GitSSHURL         string          `json:"git_ssh_url"`
	GitHTTPURL        string          `json:"git_http_url"`
	Namespace         string          `json:"namespace"` // the namespace's display name, not its path
	VisibilityLevel   VisibilityLevel `json:"visibility_level"`
	PathWithNamespace string          `json:"path_with_namespace"`
	DefaultBranch     *string         `json:"default_branch"` // nil for an empty repository
	// Older copies: Homepage is WebURL, URL and SSHURL are GitSSHURL,
	// HTTPURL is GitHTTPURL.
	Homepage string `json:"homepage"`
	URL      string `json:"url"`
	SSHURL   string `json:"ssh_url"`
	HTTPURL  string `json:"http_url"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// HookRepository is the older, smaller description of a project. Issue,
// merge request and note payloads carry the first four fields; push, tag
// push and build payloads all seven.
type HookRepository struct {
	Name            string          `json:"name"`
	URL             string          `json:"url"`
	Description     *string         `json:"description"`
	Homepage        string          `json:"homepage"`
	GitHTTPURL      string          `json:"git_http_url,omitempty"`
	GitSSHURL       string          `json:"git_ssh_url,omitempty"`
	VisibilityLevel VisibilityLevel `json:"visibility_level,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// PushCommit is a commit as pushes, merge requests and commit notes describe
// it. Only pushes list the changed paths; a renamed file appears in Added
// under its new path.
type PushCommit struct {
	ID        string        `json:"id"`
	Message   string        `json:"message"`
	Timestamp *Time         `json:"timestamp"` // the committer date
	URL       string        `json:"url"`
	Author    *CommitAuthor `json:"author"`
	Added     []string      `json:"added,omitempty"`
	Modified  []string      `json:"modified,omitempty"`
	Removed   []string      `json:"removed,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CommitAuthor is the author of a pushed commit.
type CommitAuthor struct {
	Name  string `json:"name"`
	Email string `json:"email"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}
