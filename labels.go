package collab

import (
	"context"
	"errors"
	"net/http"
	"regexp"
)

// LabelsService handles the label endpoints. Labels are addressed by name.
type LabelsService struct{ client *Client }

// Label is a project label. Create and Update answers fill only Name,
// Color and Description; subscription answers add Subscribed.
type Label struct {
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	Description            *string `json:"description"`
	OpenIssuesCount        int     `json:"open_issues_count"`
	ClosedIssuesCount      int     `json:"closed_issues_count"`
	OpenMergeRequestsCount int     `json:"open_merge_requests_count"`
	Subscribed             bool    `json:"subscribed"`
}

// DeletedLabel is the different record Delete answers with.
type DeletedLabel struct {
	ID          int     `json:"id"`
	Title       string  `json:"title"`
	Color       string  `json:"color"`
	Description *string `json:"description"`
	Priority    *int    `json:"priority"` // nil when the label had none
	ProjectID   int     `json:"project_id"`
	Template    bool    `json:"template"`
	CreatedAt   *Time   `json:"created_at"`
	UpdatedAt   *Time   `json:"updated_at"`
}

var labelColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// CreateLabelOptions are the parameters of Create. Name and Color (#RRGGBB) are required.
type CreateLabelOptions struct {
	Name        string  `url:"name"`
	Color       string  `url:"color"`
	Description *string `url:"description,omitempty"`
}

// UpdateLabelOptions are the parameters of Update. Name picks the label;
// NewName or Color is required.
type UpdateLabelOptions struct {
	Name        string  `url:"name"`
	NewName     *string `url:"new_name,omitempty"`
	Color       *string `url:"color,omitempty"`
	Description *string `url:"description,omitempty"`
}

type labelName struct {
	Name string `url:"name"`
}

// List returns a project's labels. The list is not paginated.
//
// API: GET /projects/:id/labels
func (s *LabelsService) List(ctx context.Context, pid any) ([]*Label, *Response, error) {
	return doList[Label](ctx, s.client, http.MethodGet, route("projects/%s/labels", pid), nil)
}

// Create makes a label. A duplicate name is ErrConflict.
//
// API: POST /projects/:id/labels
func (s *LabelsService) Create(ctx context.Context, pid any, opt *CreateLabelOptions) (*Label, *Response, error) {
	if opt == nil || opt.Name == "" {
		return nil, nil, errRequired("name")
	}
	if !labelColor.MatchString(opt.Color) {
		return nil, nil, errors.New("collab: label color must be # and six hex digits")
	}
	return do[Label](ctx, s.client, http.MethodPost, route("projects/%s/labels", pid), opt)
}

// Update renames or recolours a label.
//
// API: PUT /projects/:id/labels
func (s *LabelsService) Update(ctx context.Context, pid any, opt *UpdateLabelOptions) (*Label, *Response, error) {
	switch {
	case opt == nil || opt.Name == "":
		return nil, nil, errRequired("name")
	case opt.NewName == nil && opt.Color == nil:
		return nil, nil, errRequired("new_name or color")
	case opt.Color != nil && !labelColor.MatchString(*opt.Color):
		return nil, nil, errors.New("collab: label color must be # and six hex digits")
	}
	return do[Label](ctx, s.client, http.MethodPut, route("projects/%s/labels", pid), opt)
}

// Delete removes a label by name.
//
// API: DELETE /projects/:id/labels
func (s *LabelsService) Delete(ctx context.Context, pid any, name string) (*DeletedLabel, *Response, error) {
	if name == "" {
		return nil, nil, errRequired("name")
	}
	return do[DeletedLabel](ctx, s.client, http.MethodDelete, route("projects/%s/labels", pid), &labelName{name})
}

// Subscribe subscribes the caller to a label, given by id (int) or name
// (string); again is ErrNotModified.
//
// API: POST /projects/:id/labels/:label_id/subscription
func (s *LabelsService) Subscribe(ctx context.Context, pid, label any) (*Label, *Response, error) {
	return do[Label](ctx, s.client, http.MethodPost, route("projects/%s/labels/%s/subscription", pid, label), nil)
}

// Unsubscribe reverses Subscribe; again is ErrNotModified.
//
// API: DELETE /projects/:id/labels/:label_id/subscription
func (s *LabelsService) Unsubscribe(ctx context.Context, pid, label any) (*Label, *Response, error) {
	return do[Label](ctx, s.client, http.MethodDelete, route("projects/%s/labels/%s/subscription", pid, label), nil)
}
