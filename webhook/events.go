package webhook

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/collabsvc/collab"
)

// Every struct in this file is a plain value: it keeps the keys it does not
// know in Extra, and encodes every field and every Extra key, so that
// encoding a decoded event writes back each key it arrived with, with its
// value (times in RFC 3339, numbers sent as strings as numbers), and an event
// decoded and one built in code with the same data are equal and encode
// alike.
//
// Deployed servers do not all send the same keys. A field whose comment says
// "may be absent" is left out by some of them, and is then its zero value
// (nil for a pointer); a handler reads it only after checking. The project
// in particular: some servers send only the smaller repository object, so
// read it with the event's ProjectInfo method, which works for every payload
// of the kind, rather than through the Project field.

// Project is the project as webhooks describe it.
type Project = collab.HookProject

// Repository is the older, smaller description of a project.
type Repository = collab.HookRepository

// PushCommit is a git commit as pushes, merge requests and commit notes
// describe it. Only pushes list the changed paths.
type PushCommit = collab.PushCommit

// User is the person who caused an event, or an assignee.
type User struct {
	Name      string  `json:"name"`
	Username  string  `json:"username"`
	AvatarURL *string `json:"avatar_url"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// PushEvent is a push to a branch (Push Hook). It is the same record as the
// data of a "pushed to" project event. EventName, CheckoutSHA, Message,
// UserAvatar and Project may be absent: read the project with ProjectInfo.
type PushEvent struct{ collab.PushData }

// TagPushEvent is a tag created or deleted (Tag Push Hook). Its keys are
// those of a push; Ref is "refs/tags/<name>", Commits holds the tagged
// commit, if any, and Message the annotation of a new annotated tag.
// EventName, CheckoutSHA, Message, UserEmail, UserAvatar and Project may be
// absent: read the project with ProjectInfo.
type TagPushEvent struct{ collab.PushData }

// The states an event carries are the root package's types
// (collab.IssueState, collab.MergeRequestState, collab.MergeStatus,
// collab.BuildStatus), so that an event's state compares with a record's.
// Actions exist only in events, so their types live here.

// IssueAction is what happened to the issue of an IssueEvent. An action this
// package does not name, from a later server, decodes as itself.
type IssueAction string

// The actions of an issue event.
const (
	IssueOpen   IssueAction = "open"
	IssueUpdate IssueAction = "update"
	IssueClose  IssueAction = "close"
	IssueReopen IssueAction = "reopen"
)

// MergeRequestAction is what happened to the merge request of a
// MergeRequestEvent. An action this package does not name decodes as itself.
type MergeRequestAction string

// The actions of a merge request event.
const (
	MergeRequestOpen   MergeRequestAction = "open"
	MergeRequestUpdate MergeRequestAction = "update"
	MergeRequestClose  MergeRequestAction = "close"
	MergeRequestReopen MergeRequestAction = "reopen"
	MergeRequestMerge  MergeRequestAction = "merge"
)

// WikiPageAction is what happened to the page of a WikiPageEvent.
type WikiPageAction string

// The actions of a wiki page event.
const (
	WikiPageCreate WikiPageAction = "create"
	WikiPageUpdate WikiPageAction = "update"
)

// IssueEvent is an issue opened, updated, closed or reopened (Issue Hook).
type IssueEvent struct {
	ObjectKind string `json:"object_kind"` // "issue"
	User       *User  `json:"user"`        // who acted
	// Project may be absent (some servers send only Repository): use
	// ProjectInfo.
	Project          *Project         `json:"project"`
	Repository       *Repository      `json:"repository"` // name, url, description, homepage
	ObjectAttributes *IssueAttributes `json:"object_attributes"`
	// Assignee is nil when the issue has none (the key is then absent).
	Assignee *User `json:"assignee,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// IssueAttributes is the issue record of an issue event, and the issue a
// note is about (which has no URL or Action). The payload carries no labels.
type IssueAttributes struct {
	ID           int               `json:"id"`
	IID          int               `json:"iid"` // the number within the project
	Title        string            `json:"title"`
	Description  *string           `json:"description"`
	State        collab.IssueState `json:"state"`
	ProjectID    int               `json:"project_id"`
	AuthorID     int               `json:"author_id"`
	AssigneeID   *int              `json:"assignee_id"`
	MilestoneID  *int              `json:"milestone_id"`
	UpdatedByID  *int              `json:"updated_by_id"` // may be absent
	Position     int               `json:"position"`      // may be absent
	BranchName   *string           `json:"branch_name"`   // may be absent
	Confidential bool              `json:"confidential"`  // may be absent (then false)
	DueDate      *collab.Time      `json:"due_date"`      // a date, at midnight UTC; may be absent
	MovedToID    *int              `json:"moved_to_id"`   // may be absent
	DeletedAt    *collab.Time      `json:"deleted_at"`    // may be absent
	CreatedAt    *collab.Time      `json:"created_at"`
	UpdatedAt    *collab.Time      `json:"updated_at"`
	URL          string            `json:"url,omitempty"`
	Action       IssueAction       `json:"action,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// MergeRequestEvent is a merge request opened, updated, closed, reopened or
// merged (Merge Request Hook). An update is also sent when the source branch
// receives commits.
type MergeRequestEvent struct {
	ObjectKind string `json:"object_kind"` // "merge_request"
	User       *User  `json:"user"`
	// Project, the target project, may be absent, and so may Repository
	// (some servers send neither, only ObjectAttributes.Target): use
	// ProjectInfo.
	Project          *Project                `json:"project"`
	Repository       *Repository             `json:"repository"`
	ObjectAttributes *MergeRequestAttributes `json:"object_attributes"`
	// Assignee is nil when the merge request has none.
	Assignee *User `json:"assignee,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// MergeRequestAttributes is the merge request record of a merge request
// event, and the merge request a note is about (which has no URL or Action).
type MergeRequestAttributes struct {
	ID              int                      `json:"id"`
	IID             int                      `json:"iid"`
	Title           string                   `json:"title"`
	Description     *string                  `json:"description"`
	State           collab.MergeRequestState `json:"state"`
	MergeStatus     collab.MergeStatus       `json:"merge_status"`
	SourceBranch    string                   `json:"source_branch"`
	TargetBranch    string                   `json:"target_branch"`
	SourceProjectID int                      `json:"source_project_id"`
	TargetProjectID int                      `json:"target_project_id"`
	AuthorID        int                      `json:"author_id"`
	AssigneeID      *int                     `json:"assignee_id"`
	MilestoneID     *int                     `json:"milestone_id"`
	// From UpdatedByID to DeletedAt, every field may be absent.
	UpdatedByID              *int               `json:"updated_by_id"`
	Position                 int                `json:"position"`
	LockedAt                 *collab.Time       `json:"locked_at"`
	MergeError               *string            `json:"merge_error"`
	MergeParams              MergeParams        `json:"merge_params"`
	MergeWhenBuildSucceeds   bool               `json:"merge_when_build_succeeds"`
	MergeUserID              *int               `json:"merge_user_id"`
	MergeCommitSHA           *string            `json:"merge_commit_sha"`
	InProgressMergeCommitSHA *string            `json:"in_progress_merge_commit_sha,omitempty"` // sent from 8.10 on
	DeletedAt                *collab.Time       `json:"deleted_at"`
	CreatedAt                *collab.Time       `json:"created_at"`
	UpdatedAt                *collab.Time       `json:"updated_at"`
	Source                   *Project           `json:"source"` // nil when the source fork is gone
	Target                   *Project           `json:"target"`
	LastCommit               *PushCommit        `json:"last_commit"`
	WorkInProgress           bool               `json:"work_in_progress"`
	URL                      string             `json:"url,omitempty"`
	Action                   MergeRequestAction `json:"action,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// MergeParams are the merge options of a merge request, such as
// "force_remove_source_branch": "1". The values are mostly strings, and can be
// null; they are kept as encoding/json decodes them into an any.
type MergeParams map[string]any

// NoteEvent is a comment created on a commit, an issue, a merge request or a
// snippet (Note Hook). Exactly one of Commit, Issue, MergeRequest and Snippet
// is set, as ObjectAttributes.NoteableType says.
type NoteEvent struct {
	ObjectKind string `json:"object_kind"` // "note"
	User       *User  `json:"user"`        // the author
	ProjectID  int    `json:"project_id"`
	// Project may be absent (some servers send only Repository): use
	// ProjectInfo.
	Project          *Project        `json:"project"`
	Repository       *Repository     `json:"repository"`
	ObjectAttributes *NoteAttributes `json:"object_attributes"`

	Commit       *PushCommit             `json:"commit,omitempty"`
	Issue        *IssueAttributes        `json:"issue,omitempty"`
	MergeRequest *MergeRequestAttributes `json:"merge_request,omitempty"`
	Snippet      *Snippet                `json:"snippet,omitempty"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// The noteable types of NoteAttributes.NoteableType.
const (
	NoteableCommit       = "Commit"
	NoteableIssue        = "Issue"
	NoteableMergeRequest = "MergeRequest"
	NoteableSnippet      = "Snippet"
)

// NoteAttributes is the comment of a note event.
type NoteAttributes struct {
	ID           int     `json:"id"`
	Note         string  `json:"note"` // Markdown
	NoteableType string  `json:"noteable_type"`
	NoteableID   *int    `json:"noteable_id"` // nil on commit comments
	CommitID     *string `json:"commit_id"`   // the commit of a commit comment; nil or "" otherwise
	AuthorID     int     `json:"author_id"`
	ProjectID    int     `json:"project_id"`
	UpdatedByID  *int    `json:"updated_by_id"` // may be absent
	LineCode     *string `json:"line_code"`     // set on line comments
	Attachment   *string `json:"attachment"`    // a file name
	System       bool    `json:"system"`
	StDiff       *StDiff `json:"st_diff"`
	// Type is nil, "LegacyDiffNote" or, from 8.10 on, "DiffNote"; may be
	// absent.
	Type      *string      `json:"type"`
	CreatedAt *collab.Time `json:"created_at"`
	UpdatedAt *collab.Time `json:"updated_at"`
	// Position and OriginalPosition are set on a DiffNote (8.10 on), and
	// absent otherwise.
	Position         *NotePosition `json:"position,omitempty"`
	OriginalPosition *NotePosition `json:"original_position,omitempty"`
	URL              string        `json:"url"` // the target's URL with #note_<id>

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// StDiff is the diff a line comment was made on.
type StDiff struct {
	Diff        string `json:"diff"`
	NewPath     string `json:"new_path"`
	OldPath     string `json:"old_path"`
	AMode       string `json:"a_mode"`
	BMode       string `json:"b_mode"`
	NewFile     bool   `json:"new_file"`
	RenamedFile bool   `json:"renamed_file"`
	DeletedFile bool   `json:"deleted_file"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// NotePosition is where a diff comment sits.
type NotePosition struct {
	OldPath  string `json:"old_path"`
	NewPath  string `json:"new_path"`
	OldLine  *int   `json:"old_line"`
	NewLine  *int   `json:"new_line"`
	BaseSHA  string `json:"base_sha"`
	StartSHA string `json:"start_sha"`
	HeadSHA  string `json:"head_sha"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Snippet is the project snippet a note is about.
type Snippet struct {
	ID              int                    `json:"id"`
	Title           string                 `json:"title"`
	Content         string                 `json:"content"`
	FileName        string                 `json:"file_name"`
	AuthorID        int                    `json:"author_id"`
	ProjectID       int                    `json:"project_id"`
	Type            string                 `json:"type"` // "ProjectSnippet"
	VisibilityLevel collab.VisibilityLevel `json:"visibility_level"`
	CreatedAt       *collab.Time           `json:"created_at"`
	UpdatedAt       *collab.Time           `json:"updated_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BuildEvent is a CI build created, started or finished (Build Hook). A
// build normally sends three: pending, running, and its end state.
type BuildEvent struct {
	ObjectKind        string             `json:"object_kind"` // "build"
	Ref               string             `json:"ref"`         // a branch or tag name, without refs/
	Tag               bool               `json:"tag"`
	BeforeSHA         string             `json:"before_sha"` // 40 zeros when there is none
	SHA               string             `json:"sha"`
	BuildID           int                `json:"build_id"`
	BuildName         string             `json:"build_name"`
	BuildStage        string             `json:"build_stage"`
	BuildStatus       collab.BuildStatus `json:"build_status"`
	BuildStartedAt    *collab.Time       `json:"build_started_at"`
	BuildFinishedAt   *collab.Time       `json:"build_finished_at"`
	BuildDuration     *float64           `json:"build_duration"` // seconds; while running, the time so far
	BuildAllowFailure bool               `json:"build_allow_failure"`
	ProjectID         int                `json:"project_id"`
	ProjectName       string             `json:"project_name"` // "Namespace / Project"
	User              *BuildEventUser    `json:"user"`
	Pipeline          *Pipeline          `json:"commit"` // sent under "commit", but the pipeline, not a git commit
	Repository        *Repository        `json:"repository"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BuildEventUser is who triggered a build; every field is nil when nobody
// did.
type BuildEventUser struct {
	ID    *int    `json:"id"`
	Name  *string `json:"name"`
	Email *string `json:"email"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Pipeline is the pipeline a build belongs to, sent under the key "commit".
type Pipeline struct {
	ID          int                 `json:"id"` // the pipeline id, not a commit id
	SHA         string              `json:"sha"`
	Message     *string             `json:"message"`
	AuthorName  *string             `json:"author_name"`
	AuthorEmail *string             `json:"author_email"`
	Status      *collab.BuildStatus `json:"status"`   // the pipeline's status
	Duration    *int                `json:"duration"` // seconds
	StartedAt   *collab.Time        `json:"started_at"`
	FinishedAt  *collab.Time        `json:"finished_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// WikiPageEvent is a wiki page created or edited (Wiki Page Hook).
type WikiPageEvent struct {
	ObjectKind       string              `json:"object_kind"` // "wiki_page"
	User             *User               `json:"user"`
	Project          *Project            `json:"project"`
	Wiki             *Wiki               `json:"wiki"`
	ObjectAttributes *WikiPageAttributes `json:"object_attributes"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Wiki is the wiki repository of a project.
type Wiki struct {
	WebURL            string `json:"web_url"` // the wiki's home page
	GitSSHURL         string `json:"git_ssh_url"`
	GitHTTPURL        string `json:"git_http_url"`
	PathWithNamespace string `json:"path_with_namespace"`
	DefaultBranch     string `json:"default_branch"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// WikiPageAttributes is the page of a wiki page event.
type WikiPageAttributes struct {
	Title   string         `json:"title"`
	Slug    string         `json:"slug"`
	Format  string         `json:"format"` // "markdown", "rdoc", "asciidoc"...
	Content string         `json:"content"`
	Message *string        `json:"message,omitempty"` // the commit message; only on create
	URL     string         `json:"url"`
	Action  WikiPageAction `json:"action"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// RawEvent is an event of a kind this package does not know, such as the
// System Hook and Service Hook kinds, or kinds of later server releases.
type RawEvent struct {
	EventKind Kind        // the X-Gitlab-Event header, or the body's object_kind when it is missing
	Header    http.Header // the request headers, without X-Gitlab-Token and Authorization
	Body      []byte
}

// ProjectInfo is the event's project, from whichever description the
// payload carries: project when sent, else repository, read into the same
// fields. A field the payload spells in an older way is filled from it
// (WebURL from homepage, GitSSHURL from ssh_url or url, GitHTTPURL from
// http_url, PathWithNamespace from the web URL's path). The zero Project
// when the payload carries neither; never nil.
func (e *IssueEvent) ProjectInfo() Project { return projectInfo(e.Project, e.Repository) }

// ProjectInfo is the event's target project, from whichever description the
// payload carries: project, else repository, else the merge request's
// target (see IssueEvent.ProjectInfo).
func (e *MergeRequestEvent) ProjectInfo() Project {
	if e.Project == nil && e.Repository == nil && e.ObjectAttributes != nil && e.ObjectAttributes.Target != nil {
		return completed(*e.ObjectAttributes.Target)
	}
	return projectInfo(e.Project, e.Repository)
}

// ProjectInfo is the event's project, from project or else repository (see
// IssueEvent.ProjectInfo).
func (e *NoteEvent) ProjectInfo() Project { return projectInfo(e.Project, e.Repository) }

// ProjectInfo is the pushed project, from project or else repository (see
// IssueEvent.ProjectInfo).
func (e *PushEvent) ProjectInfo() Project { return projectInfo(e.Project, e.Repository) }

// ProjectInfo is the tagged project, from project or else repository (see
// IssueEvent.ProjectInfo).
func (e *TagPushEvent) ProjectInfo() Project { return projectInfo(e.Project, e.Repository) }

// projectInfo is p, or what r says about the same project, completed.
func projectInfo(p *Project, r *Repository) Project {
	switch {
	case p != nil:
		return completed(*p)
	case r == nil:
		return Project{}
	}
	return completed(Project{
		Name: r.Name, Description: r.Description, GitSSHURL: r.GitSSHURL, GitHTTPURL: r.GitHTTPURL,
		VisibilityLevel: r.VisibilityLevel, Homepage: r.Homepage, URL: r.URL,
	})
}

// completed fills p's current fields from the older spellings it carries.
func completed(p Project) Project {
	p.WebURL = cmp.Or(p.WebURL, p.Homepage)
	p.GitSSHURL = cmp.Or(p.GitSSHURL, p.SSHURL, p.URL)
	p.GitHTTPURL = cmp.Or(p.GitHTTPURL, p.HTTPURL)
	if p.PathWithNamespace == "" {
		p.PathWithNamespace = pathOf(p.WebURL)
	}
	return p
}

// pathOf is the "namespace/name" of a project's web URL, or "".
func pathOf(webURL string) string {
	u, err := url.Parse(webURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.Trim(u.Path, "/")
}
