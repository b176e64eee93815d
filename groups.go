package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// GroupsService handles the group endpoints.
type GroupsService struct{ client *Client }

// Group is a group record. Detail and update responses add Projects, and
// SharedProjects (other groups' projects shared with this one). Group
// records may also carry the fields of the group's namespace: OwnerID (nil
// for a group), CreatedAt, UpdatedAt, Avatar, ShareWithGroupLock and
// RequestAccessEnabled.
type Group struct {
	ID                   int              `json:"id"`
	Name                 string           `json:"name"`
	Path                 string           `json:"path"`
	Description          *string          `json:"description"`
	VisibilityLevel      VisibilityLevel  `json:"visibility_level"`
	AvatarURL            *string          `json:"avatar_url"`
	WebURL               string           `json:"web_url"`
	OwnerID              *int             `json:"owner_id"`
	CreatedAt            *Time            `json:"created_at"`
	UpdatedAt            *Time            `json:"updated_at"`
	Avatar               *NamespaceAvatar `json:"avatar"`
	ShareWithGroupLock   bool             `json:"share_with_group_lock"`
	RequestAccessEnabled bool             `json:"request_access_enabled"`
	Projects             []*Project       `json:"projects"`
	SharedProjects       []*Project       `json:"shared_projects"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListGroupsOptions are the parameters of List.
type ListGroupsOptions struct {
	ListOptions
	Search *string `url:"search,omitempty"` // matches name or path
}

// List returns one page of the caller's groups, or of every group for an
// administrator.
//
// API: GET /groups
func (s *GroupsService) List(ctx context.Context, opt *ListGroupsOptions) ([]*Group, *Response, error) {
	return doList[Group](ctx, s.client, http.MethodGet, route("groups"), opt)
}

// All iterates over the groups of every page of List.
//
// API: GET /groups
func (s *GroupsService) All(ctx context.Context, opt *ListGroupsOptions, iopts ...IterOption) iter.Seq2[*Group, error] {
	return all[Group](ctx, s.client, route("groups"), opt, iopts)
}

// Get returns a group, by id or path, with its projects.
//
// API: GET /groups/:id
func (s *GroupsService) Get(ctx context.Context, gid any) (*Group, *Response, error) {
	return do[Group](ctx, s.client, http.MethodGet, route("groups/%s", gid), nil)
}

// CreateGroupOptions are the parameters of Create; Name and Path are required.
type CreateGroupOptions struct {
	Name            string           `url:"name"`
	Path            string           `url:"path"`
	Description     *string          `url:"description,omitempty"`
	VisibilityLevel *VisibilityLevel `url:"visibility_level,omitempty"`
}

// Create makes a group. A nil opt, or an empty Name or Path, is an
// *ArgumentError.
//
// API: POST /groups
func (s *GroupsService) Create(ctx context.Context, opt *CreateGroupOptions) (*Group, *Response, error) {
	return doChecked[Group](ctx, s.client, http.MethodPost, route("groups"), opt, "Name", "Path")
}

// UpdateGroupOptions are the parameters of Update; nil fields are unchanged.
type UpdateGroupOptions struct {
	Name            *string          `url:"name,omitempty"`
	Path            *string          `url:"path,omitempty"`
	Description     *string          `url:"description,omitempty"`
	VisibilityLevel *VisibilityLevel `url:"visibility_level,omitempty"`
}

// Update changes a group. Group owners and administrators only.
//
// API: PUT /groups/:id
func (s *GroupsService) Update(ctx context.Context, gid any, opt *UpdateGroupOptions) (*Group, *Response, error) {
	return do[Group](ctx, s.client, http.MethodPut, route("groups/%s", gid), opt)
}

// Delete removes a group with all its projects.
//
// API: DELETE /groups/:id
func (s *GroupsService) Delete(ctx context.Context, gid any) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("groups/%s", gid), nil, nil)
}

// ListGroupProjectsOptions are the parameters of ListProjects.
type ListGroupProjectsOptions struct {
	ListProjectsOptions
	CIEnabledFirst *bool `url:"ci_enabled_first,omitempty"`
}

// ListProjects returns one page of a group's projects.
//
// API: GET /groups/:id/projects
func (s *GroupsService) ListProjects(ctx context.Context, gid any, opt *ListGroupProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("groups/%s/projects", gid), opt)
}

// AllProjects iterates over the projects of every page of ListProjects.
//
// API: GET /groups/:id/projects
func (s *GroupsService) AllProjects(ctx context.Context, gid any, opt *ListGroupProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("groups/%s/projects", gid), opt, iopts)
}

// TransferProject moves a project into a group. Administrators only.
//
// API: POST /groups/:id/projects/:project_id
func (s *GroupsService) TransferProject(ctx context.Context, gid any, projectID int) (*Group, *Response, error) {
	return do[Group](ctx, s.client, http.MethodPost, route("groups/%s/projects/%s", gid, projectID), nil)
}
