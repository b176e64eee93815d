package collab

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"time"
)

// IssuesService handles the issue endpoints.
//
// An issue has two numbers. ID is global to the instance and is what every
// method taking an issueID wants; IID is the number the project shows as #5
// in its web pages and in references. They are never the same issue by
// accident: passing an IID where an ID belongs reads or changes another
// issue, possibly in another project. GetByIID turns the #number a user
// gives into the record, and so into its ID.
type IssuesService struct{ client *Client }

// Issue is an issue record.
type Issue struct {
	ID             int        `json:"id"`
	IID            int        `json:"iid"`
	ProjectID      int        `json:"project_id"`
	Title          string     `json:"title"`
	Description    *string    `json:"description"`
	State          IssueState `json:"state"`
	CreatedAt      *Time      `json:"created_at"`
	UpdatedAt      *Time      `json:"updated_at"`
	Labels         []string   `json:"labels"`
	Milestone      *Milestone `json:"milestone"`
	Assignee       *User      `json:"assignee"`
	Author         *User      `json:"author"`
	Subscribed     bool       `json:"subscribed"`
	UserNotesCount int        `json:"user_notes_count"`
	Upvotes        int        `json:"upvotes"`
	Downvotes      int        `json:"downvotes"`
	DueDate        *Time      `json:"due_date"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListIssuesOptions filters the issue lists. Labels all have to match.
type ListIssuesOptions struct {
	ListOptions
	IID       *int        `url:"iid,omitempty"`       // the #number shown in the project
	State     *IssueState `url:"state,omitempty"`     // both states when nil
	Labels    LabelNames  `url:"labels,omitempty"`    // label names
	Milestone *string     `url:"milestone,omitempty"` // milestone title
	OrderBy   *OrderBy    `url:"order_by,omitempty"`  // created_at when nil
	Sort      *SortOrder  `url:"sort,omitempty"`      // descending when nil
}

// ListMine returns one page of the issues the caller created, across
// projects. IID and Milestone do not apply here.
//
// API: GET /issues
func (s *IssuesService) ListMine(ctx context.Context, opt *ListIssuesOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("issues"), opt)
}

// AllMine iterates over the issues of every page of ListMine.
//
// API: GET /issues
func (s *IssuesService) AllMine(ctx context.Context, opt *ListIssuesOptions, iopts ...IterOption) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("issues"), opt, iopts)
}

// List returns one page of a project's issues.
//
// API: GET /projects/:id/issues
func (s *IssuesService) List(ctx context.Context, pid any, opt *ListIssuesOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("projects/%s/issues", pid), opt)
}

// All iterates over the issues of every page of List.
//
// API: GET /projects/:id/issues
func (s *IssuesService) All(ctx context.Context, pid any, opt *ListIssuesOptions, iopts ...IterOption) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("projects/%s/issues", pid), opt, iopts)
}

// Get returns one issue. issueID is the issue's global ID, not the #IID the
// project shows; GetByIID takes that one.
//
// API: GET /projects/:id/issues/:issue_id
func (s *IssuesService) Get(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodGet, route("projects/%s/issues/%s", pid, issueID), nil)
}

// GetByIID returns the issue the project shows as #iid, through the list's
// iid filter. When the project has no such issue the error matches
// ErrNotFound, as a missing issue does in Get.
//
// API: GET /projects/:id/issues
func (s *IssuesService) GetByIID(ctx context.Context, pid any, iid int) (*Issue, *Response, error) {
	if iid <= 0 {
		return nil, nil, invalidArg("iid", "must be positive, got %d", iid)
	}
	list, resp, err := s.List(ctx, pid, &ListIssuesOptions{IID: &iid})
	return oneByIID(list, resp, err, func(is *Issue) int { return is.IID }, "issue #", pid, iid)
}

// CreateIssueOptions are the parameters of Create. Title is required.
type CreateIssueOptions struct {
	Title       string  `url:"title"`
	Description *string `url:"description,omitempty"`
	AssigneeID  *int    `url:"assignee_id,omitempty"`  // a user id
	MilestoneID *int    `url:"milestone_id,omitempty"` // a milestone's global id
	// Labels are the names to set. It is a plain list, unlike the *LabelNames of
	// UpdateIssueOptions: a new issue has no labels to keep or to clear, so
	// nil and empty both mean none.
	Labels    LabelNames `url:"labels,omitempty"`
	CreatedAt *time.Time `url:"created_at,omitempty"` // admins and project owners may backdate an issue
}

// Create opens an issue. A nil opt or an empty Title is an *ArgumentError.
//
// API: POST /projects/:id/issues
func (s *IssuesService) Create(ctx context.Context, pid any, opt *CreateIssueOptions) (*Issue, *Response, error) {
	return doChecked[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues", pid), opt, "Title")
}

// UpdateIssueOptions are the parameters of Update; nil fields are unchanged.
type UpdateIssueOptions struct {
	Title *string `url:"title,omitempty"`
	// Description replaces the description. The server ignores an empty
	// one, so it cannot clear a description.
	Description *string `url:"description,omitempty"`
	AssigneeID  *int    `url:"assignee_id,omitempty"`
	MilestoneID *int    `url:"milestone_id,omitempty"`
	// Labels replaces the issue's labels. It is a pointer so that it has
	// three meanings: nil keeps the labels, a pointer to an empty list clears
	// them, and a pointer to names sets exactly those.
	Labels     *LabelNames      `url:"labels,omitempty"`
	StateEvent *IssueStateEvent `url:"state_event,omitempty"`
	UpdatedAt  *time.Time       `url:"updated_at,omitempty"`
}

// Update changes an issue, and closes or reopens it through StateEvent.
// issueID is the issue's global ID, not the #IID the project shows.
//
// API: PUT /projects/:id/issues/:issue_id
func (s *IssuesService) Update(ctx context.Context, pid any, issueID int, opt *UpdateIssueOptions) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodPut, route("projects/%s/issues/%s", pid, issueID), opt)
}

// issueLabels is where an issue keeps what editLabels reads.
func issueLabels(is *Issue) ([]string, *Time) { return is.Labels, is.UpdatedAt }

// AddLabels adds labels to an issue and keeps the ones it has. The API can
// only replace an issue's labels, so this reads the issue, merges and
// writes: an edit someone makes between the read and the write would be
// overwritten. To narrow that window it reads again before writing, and
// merges again whenever the labels or updated_at moved between two reads
// (giving up with ErrConflict, having written nothing, after five reads). An
// edit landing between the last read and the write can still be lost. When
// every label is already there, nothing is written. issueID is the issue's
// global ID.
//
// API: GET /projects/:id/issues/:issue_id
// API: PUT /projects/:id/issues/:issue_id
func (s *IssuesService) AddLabels(ctx context.Context, pid any, issueID int, labels ...string) (*Issue, *Response, error) {
	return editLabels(ctx, s.client, route("projects/%s/issues/%s", pid, issueID), labels, addLabels, issueLabels)
}

// RemoveLabels removes labels from an issue and keeps the others, through
// the same read, merge and write as AddLabels, with the same race and the
// same narrowing. Names the issue does not have are ignored.
//
// API: GET /projects/:id/issues/:issue_id
// API: PUT /projects/:id/issues/:issue_id
func (s *IssuesService) RemoveLabels(ctx context.Context, pid any, issueID int, labels ...string) (*Issue, *Response, error) {
	return editLabels(ctx, s.client, route("projects/%s/issues/%s", pid, issueID), labels, removeLabels, issueLabels)
}

// Delete removes an issue (softly). issueID is the issue's global ID, not
// the #IID the project shows. Admins and project owners only; anyone else
// gets ErrNotFound.
//
// API: DELETE /projects/:id/issues/:issue_id
func (s *IssuesService) Delete(ctx context.Context, pid any, issueID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s/issues/%s", pid, issueID), nil, nil)
}

// moveIssueOptions is the body of Move.
type moveIssueOptions struct {
	ToProjectID int `url:"to_project_id"`
}

// Move moves an issue to another project, where labels and the milestone are
// matched by name, and returns the new issue, with a new ID and IID. issueID
// is the issue's global ID, not the #IID the project shows. Moving within the
// same project is ErrBadRequest; a toProjectID below 1 is an *ArgumentError.
//
// API: POST /projects/:id/issues/:issue_id/move
func (s *IssuesService) Move(ctx context.Context, pid any, issueID, toProjectID int) (*Issue, *Response, error) {
	if toProjectID < 1 {
		return nil, nil, invalidArg("toProjectID", "must be a positive id, got %d", toProjectID)
	}
	return do[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues/%s/move", pid, issueID), &moveIssueOptions{toProjectID})
}

// Subscribe subscribes the caller to an issue; again is ErrNotModified.
// issueID is the issue's global ID, not the #IID the project shows.
//
// API: POST /projects/:id/issues/:issue_id/subscription
func (s *IssuesService) Subscribe(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues/%s/subscription", pid, issueID), nil)
}

// Unsubscribe reverses Subscribe; again is ErrNotModified. issueID is the
// issue's global ID, not the #IID the project shows.
//
// API: DELETE /projects/:id/issues/:issue_id/subscription
func (s *IssuesService) Unsubscribe(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodDelete, route("projects/%s/issues/%s/subscription", pid, issueID), nil)
}

// oneByIID picks the record with that iid from what an iid filter returned,
// so that a server ignoring the filter cannot hand back another record. None
// is an error matching ErrNotFound that says what was looked for.
func oneByIID[T any](list []*T, resp *Response, err error, iidOf func(*T) int, what string, pid any, iid int) (*T, *Response, error) {
	if err != nil {
		return nil, resp, err
	}
	for _, it := range list {
		if iidOf(it) == iid {
			return it, resp, nil
		}
	}
	return nil, resp, fmt.Errorf("collab: project %v has no %s%d: %w", pid, what, iid, ErrNotFound)
}
