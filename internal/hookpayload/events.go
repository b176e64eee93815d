package hookpayload

import "encoding/json"

// Commit is a git commit as pushes and merge requests describe it.
type Commit struct {
	ID        string       `json:"id"`
	Message   string       `json:"message"`
	Timestamp CommitTime   `json:"timestamp"`
	URL       string       `json:"url"` // the project's web URL + "/commit/" + ID
	Author    CommitAuthor `json:"author"`
}

// CommitAuthor is the author of a Commit.
type CommitAuthor struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// PushedCommit is a commit of a push, with the paths it changed.
type PushedCommit struct {
	Commit
	Added    []string `json:"added"` // nil is written []
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// MarshalJSON writes nil path lists as [], as the servers do.
func (c PushedCommit) MarshalJSON() ([]byte, error) {
	type plain PushedCommit
	p := plain(c)
	for _, l := range []*[]string{&p.Added, &p.Modified, &p.Removed} {
		if *l == nil {
			*l = []string{}
		}
	}
	return json.Marshal(p)
}

// Push is the body of a Push Hook, and of a Tag Push Hook with ObjectKind
// and EventName "tag_push". It is also the data of a push's project event.
type Push struct {
	ObjectKind        string          `json:"object_kind"` // "push" or "tag_push"
	EventName         string          `json:"event_name"`  // the same
	Before            string          `json:"before"`
	After             string          `json:"after"`
	Ref               string          `json:"ref"`
	CheckoutSHA       *string         `json:"checkout_sha"`
	Message           *string         `json:"message"`
	UserID            *int            `json:"user_id"`
	UserName          *string         `json:"user_name"`
	UserEmail         *string         `json:"user_email"`
	UserAvatar        *string         `json:"user_avatar"`
	ProjectID         int             `json:"project_id"`
	Project           *Project        `json:"project"`
	Commits           []PushedCommit  `json:"commits"` // at most the last 20; nil is written []
	TotalCommitsCount int             `json:"total_commits_count"`
	Repository        *LongRepository `json:"repository"`
}

// MarshalJSON writes a nil commit list as [].
func (p Push) MarshalJSON() ([]byte, error) {
	type plain Push
	if p.Commits == nil {
		p.Commits = []PushedCommit{}
	}
	return json.Marshal(plain(p))
}

// Issuable is the body of an Issue Hook (A is *Issue) or a Merge Request
// Hook (A is *MergeRequest).
type Issuable[A any] struct {
	ObjectKind       string      `json:"object_kind"` // "issue" or "merge_request"
	User             *User       `json:"user"`        // who acted
	Project          *Project    `json:"project"`
	Repository       *Repository `json:"repository"`
	ObjectAttributes A           `json:"object_attributes"`
	Assignee         *User       `json:"assignee,omitempty"` // absent without an assignee
}

// Issue is the issue row of an issue event, and the issue a note is on
// (without URL and Action).
type Issue struct {
	ID           int     `json:"id"`
	IID          int     `json:"iid"`
	Title        string  `json:"title"`
	Description  *string `json:"description"`
	State        string  `json:"state"`
	ProjectID    int     `json:"project_id"`
	AuthorID     int     `json:"author_id"`
	AssigneeID   *int    `json:"assignee_id"`
	MilestoneID  *int    `json:"milestone_id"`
	UpdatedByID  *int    `json:"updated_by_id"`
	Position     int     `json:"position"`
	BranchName   *string `json:"branch_name"`
	Confidential bool    `json:"confidential"`
	DueDate      Date    `json:"due_date"`
	MovedToID    *int    `json:"moved_to_id"`
	DeletedAt    Time    `json:"deleted_at"`
	CreatedAt    Time    `json:"created_at"`
	UpdatedAt    Time    `json:"updated_at"`
	URL          string  `json:"url,omitempty"`
	Action       string  `json:"action,omitempty"`
}

// MergeRequest is the merge request row of a merge request event, with its
// projects and last commit, and the merge request a note is on (without URL
// and Action).
type MergeRequest struct {
	ID                     int               `json:"id"`
	IID                    int               `json:"iid"`
	Title                  string            `json:"title"`
	Description            *string           `json:"description"`
	State                  string            `json:"state"`
	MergeStatus            string            `json:"merge_status"`
	SourceBranch           string            `json:"source_branch"`
	TargetBranch           string            `json:"target_branch"`
	SourceProjectID        int               `json:"source_project_id"`
	TargetProjectID        int               `json:"target_project_id"`
	AuthorID               int               `json:"author_id"`
	AssigneeID             *int              `json:"assignee_id"`
	MilestoneID            *int              `json:"milestone_id"`
	UpdatedByID            *int              `json:"updated_by_id"`
	Position               int               `json:"position"`
	LockedAt               Time              `json:"locked_at"`
	MergeError             *string           `json:"merge_error"`
	MergeParams            map[string]string `json:"merge_params"` // nil is written {}
	MergeWhenBuildSucceeds bool              `json:"merge_when_build_succeeds"`
	MergeUserID            *int              `json:"merge_user_id"`
	MergeCommitSHA         *string           `json:"merge_commit_sha"`
	DeletedAt              Time              `json:"deleted_at"`
	CreatedAt              Time              `json:"created_at"`
	UpdatedAt              Time              `json:"updated_at"`
	Source                 *Project          `json:"source"` // nil when the source project is gone
	Target                 *Project          `json:"target"`
	LastCommit             *Commit           `json:"last_commit"`
	WorkInProgress         bool              `json:"work_in_progress"`
	URL                    string            `json:"url,omitempty"`
	Action                 string            `json:"action,omitempty"`
}

// MarshalJSON writes nil merge params as {}.
func (m MergeRequest) MarshalJSON() ([]byte, error) {
	type plain MergeRequest
	if m.MergeParams == nil {
		m.MergeParams = map[string]string{}
	}
	return json.Marshal(plain(m))
}

// Note is the body of a Note Hook on an issue or a merge request: Issue or
// MergeRequest is set, as ObjectAttributes.NoteableType says.
type Note struct {
	ObjectKind       string          `json:"object_kind"` // "note"
	User             *User           `json:"user"`        // the author
	ProjectID        int             `json:"project_id"`
	Project          *Project        `json:"project"`
	Repository       *Repository     `json:"repository"`
	ObjectAttributes *NoteAttributes `json:"object_attributes"`
	Issue            *Issue          `json:"issue,omitempty"`
	MergeRequest     *MergeRequest   `json:"merge_request,omitempty"`
}

// NoteAttributes is the comment of a note event.
type NoteAttributes struct {
	ID           int     `json:"id"`
	Note         string  `json:"note"`
	NoteableType string  `json:"noteable_type"` // "Issue" or "MergeRequest"
	NoteableID   *int    `json:"noteable_id"`
	CommitID     *string `json:"commit_id"`
	AuthorID     int     `json:"author_id"`
	ProjectID    int     `json:"project_id"`
	UpdatedByID  *int    `json:"updated_by_id"`
	LineCode     *string `json:"line_code"`
	Attachment   *string `json:"attachment"`
	System       bool    `json:"system"`
	// StDiff and Type are null: line comments are not built here.
	StDiff    json.RawMessage `json:"st_diff"`
	Type      *string         `json:"type"`
	CreatedAt Time            `json:"created_at"`
	UpdatedAt Time            `json:"updated_at"`
	URL       string          `json:"url"`
}

// Build is the body of a Build Hook: flat, with the build's pipeline under
// "commit".
type Build struct {
	ObjectKind        string          `json:"object_kind"` // "build"
	Ref               string          `json:"ref"`
	Tag               bool            `json:"tag"`
	BeforeSHA         string          `json:"before_sha"` // ZeroSHA when there is none
	SHA               string          `json:"sha"`
	BuildID           int             `json:"build_id"`
	BuildName         string          `json:"build_name"`
	BuildStage        string          `json:"build_stage"`
	BuildStatus       string          `json:"build_status"`
	BuildStartedAt    Time            `json:"build_started_at"`
	BuildFinishedAt   Time            `json:"build_finished_at"`
	BuildDuration     *float64        `json:"build_duration"` // seconds
	BuildAllowFailure bool            `json:"build_allow_failure"`
	ProjectID         int             `json:"project_id"`
	ProjectName       string          `json:"project_name"` // "Namespace / Project"
	User              BuildUser       `json:"user"`
	Commit            *Pipeline       `json:"commit"`
	Repository        *LongRepository `json:"repository"`
}

// BuildUser is who triggered a build; all null when nobody did.
type BuildUser struct {
	ID    *int    `json:"id"`
	Name  *string `json:"name"`
	Email *string `json:"email"`
}

// Pipeline is the pipeline of a build event.
type Pipeline struct {
	ID          int     `json:"id"`
	SHA         string  `json:"sha"`
	Message     *string `json:"message"`
	AuthorName  *string `json:"author_name"`
	AuthorEmail *string `json:"author_email"`
	Status      *string `json:"status"`
	Duration    *int    `json:"duration"` // seconds
	StartedAt   Time    `json:"started_at"`
	FinishedAt  Time    `json:"finished_at"`
}
