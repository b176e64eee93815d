package collab

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// IssuesService handles the issue endpoints of the contract.
type IssuesService struct{ client *Client }

// Issue is an issue record.
type Issue struct {
	ID             int        `json:"id"`
	IID            int        `json:"iid"`
	ProjectID      int        `json:"project_id"`
	Title          string     `json:"title"`
	Description    *string    `json:"description"`
	State          string     `json:"state"`
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
}

// ListIssuesOptions filters the issue lists. Labels all have to match.
type ListIssuesOptions struct {
	ListOptions
	IID       *int    `url:"iid,omitempty"`
	State     *string `url:"state,omitempty"` // opened or closed; all when nil
	Labels    Labels  `url:"labels,omitempty"`
	Milestone *string `url:"milestone,omitempty"` // milestone title
	OrderBy   *string `url:"order_by,omitempty"`  // created_at or updated_at
	Sort      *string `url:"sort,omitempty"`      // asc or desc
}

// ListMine returns the issues the caller created, across projects. IID and
// Milestone do not apply here.
//
// API: GET /issues
func (s *IssuesService) ListMine(ctx context.Context, opt *ListIssuesOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("issues"), opt)
}

// AllMine iterates over every issue ListMine returns.
//
// API: GET /issues
func (s *IssuesService) AllMine(ctx context.Context, opt *ListIssuesOptions) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("issues"), opt)
}

// List returns a project's issues.
//
// API: GET /projects/:id/issues
func (s *IssuesService) List(ctx context.Context, pid any, opt *ListIssuesOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("projects/%s/issues", pid), opt)
}

// All iterates over every issue List returns.
//
// API: GET /projects/:id/issues
func (s *IssuesService) All(ctx context.Context, pid any, opt *ListIssuesOptions) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("projects/%s/issues", pid), opt)
}

// Get returns one issue by its id (not its iid).
//
// API: GET /projects/:id/issues/:issue_id
func (s *IssuesService) Get(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodGet, route("projects/%s/issues/%s", pid, issueID), nil)
}

// CreateIssueOptions are the parameters of Create. Title is required.
type CreateIssueOptions struct {
	Title       string     `url:"title"`
	Description *string    `url:"description,omitempty"`
	AssigneeID  *int       `url:"assignee_id,omitempty"`
	MilestoneID *int       `url:"milestone_id,omitempty"`
	Labels      Labels     `url:"labels,omitempty"`
	CreatedAt   *time.Time `url:"created_at,omitempty"` // ISO 8601; admins and owners backdate issues
}

// Create opens an issue.
//
// API: POST /projects/:id/issues
func (s *IssuesService) Create(ctx context.Context, pid any, opt *CreateIssueOptions) (*Issue, *Response, error) {
	if opt == nil || opt.Title == "" {
		return nil, nil, errRequired("title")
	}
	return do[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues", pid), opt)
}

// UpdateIssueOptions are the parameters of Update; nil fields are unchanged.
// A non-nil empty Labels clears the labels.
type UpdateIssueOptions struct {
	Title       *string    `url:"title,omitempty"`
	Description *string    `url:"description,omitempty"`
	AssigneeID  *int       `url:"assignee_id,omitempty"`
	MilestoneID *int       `url:"milestone_id,omitempty"`
	Labels      *Labels    `url:"labels,omitempty"`
	StateEvent  *string    `url:"state_event,omitempty"` // close or reopen
	UpdatedAt   *time.Time `url:"updated_at,omitempty"`
}

// Update changes an issue, and closes or reopens it through StateEvent.
//
// API: PUT /projects/:id/issues/:issue_id
func (s *IssuesService) Update(ctx context.Context, pid any, issueID int, opt *UpdateIssueOptions) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodPut, route("projects/%s/issues/%s", pid, issueID), opt)
}

// Delete removes an issue (softly). Admins and project owners only; anyone
// else gets ErrNotFound.
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
// matched by name. Moving within the same project is ErrBadRequest.
//
// API: POST /projects/:id/issues/:issue_id/move
func (s *IssuesService) Move(ctx context.Context, pid any, issueID, toProjectID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues/%s/move", pid, issueID), &moveIssueOptions{toProjectID})
}

// Subscribe subscribes the caller to an issue; again is ErrNotModified.
//
// API: POST /projects/:id/issues/:issue_id/subscription
func (s *IssuesService) Subscribe(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodPost, route("projects/%s/issues/%s/subscription", pid, issueID), nil)
}

// Unsubscribe reverses Subscribe; again is ErrNotModified.
//
// API: DELETE /projects/:id/issues/:issue_id/subscription
func (s *IssuesService) Unsubscribe(ctx context.Context, pid any, issueID int) (*Issue, *Response, error) {
	return do[Issue](ctx, s.client, http.MethodDelete, route("projects/%s/issues/%s/subscription", pid, issueID), nil)
}
