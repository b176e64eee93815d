package collab

import (
	"context"
	"iter"
	"net/http"
)

// MilestonesService handles project milestones. The contract names them
// without showing the endpoints; they follow the server notes. There is no delete.
type MilestonesService struct{ client *Client }

// ListMilestonesOptions are the parameters of List.
type ListMilestonesOptions struct {
	ListOptions
	State *string `url:"state,omitempty"` // active or closed
	IID   *int    `url:"iid,omitempty"`
}

// CreateMilestoneOptions are the parameters of Create. Title is required.
type CreateMilestoneOptions struct {
	Title       string  `url:"title"`
	Description *string `url:"description,omitempty"`
	DueDate     *string `url:"due_date,omitempty"` // YYYY-MM-DD
}

// UpdateMilestoneOptions are the parameters of Update; nil fields are unchanged.
type UpdateMilestoneOptions struct {
	Title       *string `url:"title,omitempty"`
	Description *string `url:"description,omitempty"`
	DueDate     *string `url:"due_date,omitempty"`
	StateEvent  *string `url:"state_event,omitempty"` // close or activate
}

// List returns a project's milestones.
//
// API: GET /projects/:id/milestones
func (s *MilestonesService) List(ctx context.Context, pid any, opt *ListMilestonesOptions) ([]*Milestone, *Response, error) {
	return doList[Milestone](ctx, s.client, http.MethodGet, route("projects/%s/milestones", pid), opt)
}

// All iterates over every milestone List returns.
//
// API: GET /projects/:id/milestones
func (s *MilestonesService) All(ctx context.Context, pid any, opt *ListMilestonesOptions) iter.Seq2[*Milestone, error] {
	return all[Milestone](ctx, s.client, route("projects/%s/milestones", pid), opt)
}

// Get returns one milestone.
//
// API: GET /projects/:id/milestones/:milestone_id
func (s *MilestonesService) Get(ctx context.Context, pid any, milestoneID int) (*Milestone, *Response, error) {
	return do[Milestone](ctx, s.client, http.MethodGet, route("projects/%s/milestones/%s", pid, milestoneID), nil)
}

// Create makes a milestone.
//
// API: POST /projects/:id/milestones
func (s *MilestonesService) Create(ctx context.Context, pid any, opt *CreateMilestoneOptions) (*Milestone, *Response, error) {
	if opt == nil || opt.Title == "" {
		return nil, nil, errRequired("title")
	}
	return do[Milestone](ctx, s.client, http.MethodPost, route("projects/%s/milestones", pid), opt)
}

// Update changes a milestone, and closes or reactivates it through StateEvent.
//
// API: PUT /projects/:id/milestones/:milestone_id
func (s *MilestonesService) Update(ctx context.Context, pid any, milestoneID int, opt *UpdateMilestoneOptions) (*Milestone, *Response, error) {
	return do[Milestone](ctx, s.client, http.MethodPut, route("projects/%s/milestones/%s", pid, milestoneID), opt)
}

// ListIssues returns a milestone's issues.
//
// API: GET /projects/:id/milestones/:milestone_id/issues
func (s *MilestonesService) ListIssues(ctx context.Context, pid any, milestoneID int, opt *ListOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("projects/%s/milestones/%s/issues", pid, milestoneID), opt)
}

// AllIssues iterates over every issue ListIssues returns.
//
// API: GET /projects/:id/milestones/:milestone_id/issues
func (s *MilestonesService) AllIssues(ctx context.Context, pid any, milestoneID int, opt *ListOptions) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("projects/%s/milestones/%s/issues", pid, milestoneID), opt)
}
