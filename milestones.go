package collab

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// MilestonesService handles project milestones. The API has no call to
// delete one; close it through Update instead.
type MilestonesService struct{ client *Client }

// ListMilestonesOptions are the parameters of List.
type ListMilestonesOptions struct {
	ListOptions
	State *MilestoneState `url:"state,omitempty"` // both states when nil
	IID   *int            `url:"iid,omitempty"`   // the number shown in the project
}

// CreateMilestoneOptions are the parameters of Create. Title is required.
type CreateMilestoneOptions struct {
	Title       string  `url:"title"`
	Description *string `url:"description,omitempty"`
	DueDate     *string `url:"due_date,omitempty"` // YYYY-MM-DD
}

// checkDueDate reports a due date the server would not read as a date. An
// empty one is sent as it is.
func checkDueDate(d *string) error {
	if d == nil || *d == "" {
		return nil
	}
	if _, err := time.Parse(time.DateOnly, *d); err != nil {
		return invalidArg("opt.DueDate", "must be a date as YYYY-MM-DD, got %q", *d)
	}
	return nil
}

// UpdateMilestoneOptions are the parameters of Update; nil fields are unchanged.
type UpdateMilestoneOptions struct {
	Title *string `url:"title,omitempty"`
	// Description replaces the description. The server ignores an empty
	// one, so it cannot clear a description.
	Description *string `url:"description,omitempty"`
	// DueDate (YYYY-MM-DD) replaces the due date. The server ignores an
	// empty one, so it cannot clear a due date.
	DueDate    *string              `url:"due_date,omitempty"`
	StateEvent *MilestoneStateEvent `url:"state_event,omitempty"`
}

// List returns one page of a project's milestones.
//
// API: GET /projects/:id/milestones
func (s *MilestonesService) List(ctx context.Context, pid any, opt *ListMilestonesOptions) ([]*Milestone, *Response, error) {
	return doList[Milestone](ctx, s.client, http.MethodGet, route("projects/%s/milestones", pid), opt)
}

// All iterates over the milestones of every page of List.
//
// API: GET /projects/:id/milestones
func (s *MilestonesService) All(ctx context.Context, pid any, opt *ListMilestonesOptions, iopts ...IterOption) iter.Seq2[*Milestone, error] {
	return all[Milestone](ctx, s.client, route("projects/%s/milestones", pid), opt, iopts)
}

// Get returns one milestone. milestoneID is the milestone's global ID, not its
// IID.
//
// API: GET /projects/:id/milestones/:milestone_id
func (s *MilestonesService) Get(ctx context.Context, pid any, milestoneID int) (*Milestone, *Response, error) {
	return do[Milestone](ctx, s.client, http.MethodGet, route("projects/%s/milestones/%s", pid, milestoneID), nil)
}

// Create makes a milestone. A nil opt, an empty Title or a DueDate not in
// the form YYYY-MM-DD is an *ArgumentError.
//
// API: POST /projects/:id/milestones
func (s *MilestonesService) Create(ctx context.Context, pid any, opt *CreateMilestoneOptions) (*Milestone, *Response, error) {
	if err := checkRequired(opt, "Title"); err != nil {
		return nil, nil, err
	}
	if err := checkDueDate(opt.DueDate); err != nil {
		return nil, nil, err
	}
	return do[Milestone](ctx, s.client, http.MethodPost, route("projects/%s/milestones", pid), opt)
}

// Update changes a milestone, and closes or reactivates it through StateEvent.
// milestoneID is the milestone's global ID, not its IID. A DueDate not in the
// form YYYY-MM-DD is an *ArgumentError.
//
// API: PUT /projects/:id/milestones/:milestone_id
func (s *MilestonesService) Update(ctx context.Context, pid any, milestoneID int, opt *UpdateMilestoneOptions) (*Milestone, *Response, error) {
	if opt != nil {
		if err := checkDueDate(opt.DueDate); err != nil {
			return nil, nil, err
		}
	}
	return do[Milestone](ctx, s.client, http.MethodPut, route("projects/%s/milestones/%s", pid, milestoneID), opt)
}

// ListIssues returns one page of a milestone's issues. milestoneID is the
// milestone's global ID, not its IID.
//
// API: GET /projects/:id/milestones/:milestone_id/issues
func (s *MilestonesService) ListIssues(ctx context.Context, pid any, milestoneID int, opt *ListOptions) ([]*Issue, *Response, error) {
	return doList[Issue](ctx, s.client, http.MethodGet, route("projects/%s/milestones/%s/issues", pid, milestoneID), opt)
}

// AllIssues iterates over the issues of every page of ListIssues. milestoneID
// is the milestone's global ID, not its IID.
//
// API: GET /projects/:id/milestones/:milestone_id/issues
func (s *MilestonesService) AllIssues(ctx context.Context, pid any, milestoneID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*Issue, error] {
	return all[Issue](ctx, s.client, route("projects/%s/milestones/%s/issues", pid, milestoneID), opt, iopts)
}
