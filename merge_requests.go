package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/collabsvc/collab/internal/jsonkeep"
)

// MergeRequestsService handles the merge request endpoints.
//
// A merge request has two numbers. ID is global to the instance and is what
// every method taking an mrID wants; IID is the number the project shows as
// !5 in its web pages and in references. Passing an IID where an ID belongs
// reads or changes another merge request. GetByIID turns the !number a user
// gives into the record, and so into its ID.
//
// Merge errors: servers do not agree on what 405 and 406 mean. The API
// documentation says 405 for conflicts and 406 for a closed or merged
// request; deployed 8.x servers answer 405 for a request that is not open
// (or is work in progress, or waits on CI) and 406 "Branch cannot be merged"
// for conflicts. Match both ErrMethodNotAllowed and ErrNotAcceptable as "not
// mergeable now", and read ErrorResponse.Message for the reason; do not rely
// on one meaning per code. A sha mismatch is ErrConflict and a caller who may
// not merge gets ErrUnauthorized.
type MergeRequestsService struct{ client *Client }

// MergeRequest is a merge request record.
type MergeRequest struct {
	ID                       int               `json:"id"`
	IID                      int               `json:"iid"`
	ProjectID                int               `json:"project_id"`
	SourceBranch             string            `json:"source_branch"`
	TargetBranch             string            `json:"target_branch"`
	SourceProjectID          int               `json:"source_project_id"` // some servers send a string such as "2"
	TargetProjectID          int               `json:"target_project_id"`
	Title                    string            `json:"title"`
	Description              *string           `json:"description"`
	State                    MergeRequestState `json:"state"`
	CreatedAt                *Time             `json:"created_at"`
	UpdatedAt                *Time             `json:"updated_at"`
	Upvotes                  int               `json:"upvotes"`
	Downvotes                int               `json:"downvotes"`
	Author                   *User             `json:"author"`
	Assignee                 *User             `json:"assignee"`
	Labels                   []string          `json:"labels"`
	Milestone                *Milestone        `json:"milestone"`
	WorkInProgress           bool              `json:"work_in_progress"`
	MergeWhenBuildSucceeds   bool              `json:"merge_when_build_succeeds"`
	MergeStatus              MergeStatus       `json:"merge_status"`
	Subscribed               bool              `json:"subscribed"`
	UserNotesCount           int               `json:"user_notes_count"`
	ShouldRemoveSourceBranch *bool             `json:"should_remove_source_branch"`
	ForceRemoveSourceBranch  *bool             `json:"force_remove_source_branch"`
	Changes                  []*Change         `json:"changes"` // only from Changes

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Change is one file of a merge request's diff.
type Change struct {
	OldPath     string `json:"old_path"`
	NewPath     string `json:"new_path"`
	AMode       string `json:"a_mode"`
	BMode       string `json:"b_mode"`
	Diff        string `json:"diff"`
	NewFile     bool   `json:"new_file"`
	RenamedFile bool   `json:"renamed_file"`
	DeletedFile bool   `json:"deleted_file"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// MergeRequestCommit is a commit of a merge request.
type MergeRequestCommit struct {
	ID          string `json:"id"`
	ShortID     string `json:"short_id"`
	Title       string `json:"title"`
	AuthorName  string `json:"author_name"`
	AuthorEmail string `json:"author_email"`
	CreatedAt   *Time  `json:"created_at"`
	Message     string `json:"message"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ClosingIssue is an item of ClosesIssues: an issue of this service in
// Issue, or, with an external tracker, only ExternalID and Title (then Issue
// is nil, so check it before reading its fields). Title is set in both cases.
type ClosingIssue struct {
	Issue      *Issue `json:"-"`
	ExternalID string `json:"id"`
	Title      string `json:"title"`

	// Extra holds the keys this package does not know, verbatim. The tag
	// says that the type decodes itself, with UnmarshalJSON.
	Extra map[string]json.RawMessage `json:"-" jsonkeep:"self"`
}

// UnmarshalJSON tells the external-tracker shape (a string id) from an
// issue, which it decodes into Issue.
func (ci *ClosingIssue) UnmarshalJSON(b []byte) error {
	*ci = ClosingIssue{} // nothing of a previous value survives
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if err := jsonkeep.Decode(b, &probe); err != nil {
		return err
	}
	if len(probe.ID) > 0 && probe.ID[0] == '"' {
		return jsonkeep.Decode(b, ci)
	}
	ci.Issue = new(Issue)
	err := jsonkeep.Decode(b, ci.Issue)
	ci.Title = ci.Issue.Title
	return err
}

// MarshalJSON writes the issue, or the external tracker's entry.
func (ci ClosingIssue) MarshalJSON() ([]byte, error) {
	if ci.Issue != nil {
		return jsonkeep.Encode(ci.Issue)
	}
	return jsonkeep.Encode(&ci)
}

// ListMergeRequestsOptions are the parameters of List.
type ListMergeRequestsOptions struct {
	ListOptions
	IID     *int               `url:"iid,omitempty"`      // the !number shown in the project
	State   *MergeRequestState `url:"state,omitempty"`    // every state when nil
	OrderBy *OrderBy           `url:"order_by,omitempty"` // created_at when nil
	Sort    *SortOrder         `url:"sort,omitempty"`     // descending when nil
}

// CreateMergeRequestOptions are the parameters of Create. SourceBranch,
// TargetBranch and Title are required.
type CreateMergeRequestOptions struct {
	SourceBranch    string  `url:"source_branch"`
	TargetBranch    string  `url:"target_branch"`
	Title           string  `url:"title"`
	AssigneeID      *int    `url:"assignee_id,omitempty"`
	Description     *string `url:"description,omitempty"`
	TargetProjectID *int    `url:"target_project_id,omitempty"`
	// Labels are the names to set. It is a plain list, unlike the *LabelNames of
	// UpdateMergeRequestOptions: a new merge request has no labels to keep or
	// to clear, so nil and empty both mean none.
	Labels      LabelNames `url:"labels,omitempty"`
	MilestoneID *int       `url:"milestone_id,omitempty"`
}

// UpdateMergeRequestOptions are the parameters of Update; nil fields are unchanged.
type UpdateMergeRequestOptions struct {
	TargetBranch *string `url:"target_branch,omitempty"`
	AssigneeID   *int    `url:"assignee_id,omitempty"`
	Title        *string `url:"title,omitempty"`
	// Description replaces the description. The server ignores an empty
	// one, so it cannot clear a description.
	Description *string                 `url:"description,omitempty"`
	StateEvent  *MergeRequestStateEvent `url:"state_event,omitempty"`
	// Labels replaces the merge request's labels. It is a pointer so that it
	// has three meanings: nil keeps the labels, a pointer to an empty list
	// clears them, and a pointer to names sets exactly those.
	Labels      *LabelNames `url:"labels,omitempty"`
	MilestoneID *int        `url:"milestone_id,omitempty"`
}

// MergeMergeRequestOptions are the parameters of Merge.
type MergeMergeRequestOptions struct {
	MergeCommitMessage *string
	// ShouldRemoveSourceBranch is sent only when true: the server removes
	// the branch whenever the key is present.
	ShouldRemoveSourceBranch bool
	// MergeWhenBuildSucceeds waits for the source branch's build and merges
	// when it succeeds.
	MergeWhenBuildSucceeds *bool
	// SHA must equal the source branch's HEAD, or the merge is ErrConflict.
	SHA *string
}

// mergeForm is what Merge sends: the build-succeeds flag under both names,
// merged_when_build_succeeds as documented and merge_when_build_succeeds,
// which is the one deployed servers read.
type mergeForm struct {
	MergeCommitMessage       *string `url:"merge_commit_message,omitempty"`
	ShouldRemoveSourceBranch bool    `url:"should_remove_source_branch,omitempty"`
	MergedWhenBuildSucceeds  *bool   `url:"merged_when_build_succeeds,omitempty"`
	MergeWhenBuildSucceeds   *bool   `url:"merge_when_build_succeeds,omitempty"`
	SHA                      *string `url:"sha,omitempty"`
}

func mrPath(pid any, mrID int, suffix string) endpoint {
	return noteablePath("merge_requests", pid, mrID, suffix)
}

// List returns one page of a project's merge requests.
//
// API: GET /projects/:id/merge_requests
func (s *MergeRequestsService) List(ctx context.Context, pid any, opt *ListMergeRequestsOptions) ([]*MergeRequest, *Response, error) {
	return doList[MergeRequest](ctx, s.client, http.MethodGet, route("projects/%s/merge_requests", pid), opt)
}

// All iterates over the merge requests of every page of List.
//
// API: GET /projects/:id/merge_requests
func (s *MergeRequestsService) All(ctx context.Context, pid any, opt *ListMergeRequestsOptions, iopts ...IterOption) iter.Seq2[*MergeRequest, error] {
	return all[MergeRequest](ctx, s.client, route("projects/%s/merge_requests", pid), opt, iopts)
}

// Get returns one merge request. mrID is its global ID, not the !IID the
// project shows; GetByIID takes that one.
//
// API: GET /projects/:id/merge_requests/:merge_request_id
func (s *MergeRequestsService) Get(ctx context.Context, pid any, mrID int) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodGet, mrPath(pid, mrID, ""), nil)
}

// GetByIID returns the merge request the project shows as !iid, through the
// list's iid filter. When the project has no such merge request the error
// matches ErrNotFound, as a missing one does in Get.
//
// API: GET /projects/:id/merge_requests
func (s *MergeRequestsService) GetByIID(ctx context.Context, pid any, iid int) (*MergeRequest, *Response, error) {
	if iid <= 0 {
		return nil, nil, invalidArg("iid", "must be positive, got %d", iid)
	}
	// State all, in case a server's default is only the open ones.
	list, resp, err := s.List(ctx, pid, &ListMergeRequestsOptions{IID: &iid, State: Ptr(MergeRequestAll)})
	return oneByIID(list, resp, err, func(mr *MergeRequest) int { return mr.IID }, "merge request !", pid, iid)
}

// Commits returns a merge request's commits. The list is not paginated.
// mrID is the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/commits
func (s *MergeRequestsService) Commits(ctx context.Context, pid any, mrID int) ([]*MergeRequestCommit, *Response, error) {
	return doList[MergeRequestCommit](ctx, s.client, http.MethodGet, mrPath(pid, mrID, "/commits"), nil)
}

// Changes returns a merge request with its Changes filled. mrID is its
// global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/changes
func (s *MergeRequestsService) Changes(ctx context.Context, pid any, mrID int) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodGet, mrPath(pid, mrID, "/changes"), nil)
}

// Create opens a merge request. A nil opt, or an empty SourceBranch,
// TargetBranch or Title, is an *ArgumentError naming the first one missing.
//
// API: POST /projects/:id/merge_requests
func (s *MergeRequestsService) Create(ctx context.Context, pid any, opt *CreateMergeRequestOptions) (*MergeRequest, *Response, error) {
	return doChecked[MergeRequest](ctx, s.client, http.MethodPost, route("projects/%s/merge_requests", pid), opt, "SourceBranch", "TargetBranch", "Title")
}

// Update changes a merge request, and closes, reopens or merges it through
// StateEvent. mrID is its global ID, not the !IID the project shows.
//
// API: PUT /projects/:id/merge_requests/:merge_request_id
func (s *MergeRequestsService) Update(ctx context.Context, pid any, mrID int, opt *UpdateMergeRequestOptions) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodPut, mrPath(pid, mrID, ""), opt)
}

// mrLabels is where a merge request keeps what editLabels reads.
func mrLabels(mr *MergeRequest) ([]string, *Time) { return mr.Labels, mr.UpdatedAt }

// AddLabels adds labels to a merge request and keeps the ones it has. The
// API can only replace the labels, so this reads, merges and writes, with
// the race and the narrowing IssuesService.AddLabels describes: it reads
// again before writing and merges again while the labels or updated_at move.
// mrID is the merge request's global ID.
//
// API: GET /projects/:id/merge_requests/:merge_request_id
// API: PUT /projects/:id/merge_requests/:merge_request_id
func (s *MergeRequestsService) AddLabels(ctx context.Context, pid any, mrID int, labels ...string) (*MergeRequest, *Response, error) {
	return editLabels(ctx, s.client, mrPath(pid, mrID, ""), labels, addLabels, mrLabels)
}

// RemoveLabels removes labels from a merge request and keeps the others,
// through the same read, merge and write as AddLabels. Names it does not
// have are ignored.
//
// API: GET /projects/:id/merge_requests/:merge_request_id
// API: PUT /projects/:id/merge_requests/:merge_request_id
func (s *MergeRequestsService) RemoveLabels(ctx context.Context, pid any, mrID int, labels ...string) (*MergeRequest, *Response, error) {
	return editLabels(ctx, s.client, mrPath(pid, mrID, ""), labels, removeLabels, mrLabels)
}

// Delete removes a merge request (softly). mrID is its global ID, not the
// !IID the project shows. Admins and project owners only; anyone else gets
// ErrNotFound.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id
func (s *MergeRequestsService) Delete(ctx context.Context, pid any, mrID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, mrPath(pid, mrID, ""), nil, nil)
}

// Merge accepts a merge request. mrID is its global ID, not the !IID the
// project shows. See the service doc for its errors. A nil opt merges with
// the server's defaults.
//
// API: PUT /projects/:id/merge_requests/:merge_request_id/merge
func (s *MergeRequestsService) Merge(ctx context.Context, pid any, mrID int, opt *MergeMergeRequestOptions) (*MergeRequest, *Response, error) {
	form := &mergeForm{}
	if opt != nil {
		form = &mergeForm{MergeCommitMessage: opt.MergeCommitMessage, ShouldRemoveSourceBranch: opt.ShouldRemoveSourceBranch,
			MergedWhenBuildSucceeds: opt.MergeWhenBuildSucceeds, MergeWhenBuildSucceeds: opt.MergeWhenBuildSucceeds, SHA: opt.SHA}
	}
	return do[MergeRequest](ctx, s.client, http.MethodPut, mrPath(pid, mrID, "/merge"), form)
}

// CancelMergeWhenBuildSucceeds clears the merge-when-build-succeeds flag.
// It is ErrNotAcceptable when the flag is not set. mrID is the merge
// request's global ID, not the !IID the project shows.
//
// API: PUT /projects/:id/merge_requests/:merge_request_id/cancel_merge_when_build_succeeds
func (s *MergeRequestsService) CancelMergeWhenBuildSucceeds(ctx context.Context, pid any, mrID int) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodPut, mrPath(pid, mrID, "/cancel_merge_when_build_succeeds"), nil)
}

// ClosesIssues returns one page of the issues merging would close. mrID is
// the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/closes_issues
func (s *MergeRequestsService) ClosesIssues(ctx context.Context, pid any, mrID int, opt *ListOptions) ([]*ClosingIssue, *Response, error) {
	return doList[ClosingIssue](ctx, s.client, http.MethodGet, mrPath(pid, mrID, "/closes_issues"), opt)
}

// AllClosesIssues iterates over the items of every page of ClosesIssues. mrID
// is the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/closes_issues
func (s *MergeRequestsService) AllClosesIssues(ctx context.Context, pid any, mrID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*ClosingIssue, error] {
	return all[ClosingIssue](ctx, s.client, mrPath(pid, mrID, "/closes_issues"), opt, iopts)
}

// Subscribe subscribes the caller to a merge request; again is
// ErrNotModified. mrID is its global ID, not the !IID the project shows.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/subscription
func (s *MergeRequestsService) Subscribe(ctx context.Context, pid any, mrID int) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodPost, mrPath(pid, mrID, "/subscription"), nil)
}

// Unsubscribe reverses Subscribe; again is ErrNotModified. mrID is the
// merge request's global ID, not the !IID the project shows.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id/subscription
func (s *MergeRequestsService) Unsubscribe(ctx context.Context, pid any, mrID int) (*MergeRequest, *Response, error) {
	return do[MergeRequest](ctx, s.client, http.MethodDelete, mrPath(pid, mrID, "/subscription"), nil)
}
