package collab

import (
	"context"
	"iter"
	"net/http"
)

// ProjectMembersService handles /projects/:id/members.
type ProjectMembersService struct{ client *Client }

// GroupMembersService handles /groups/:id/members.
type GroupMembersService struct{ client *Client }

// Member is a project or group member. Group members carry no email.
type Member struct {
	ID          int         `json:"id"`
	Username    string      `json:"username"`
	Email       string      `json:"email"`
	Name        string      `json:"name"`
	State       string      `json:"state"`
	AvatarURL   *string     `json:"avatar_url"`
	WebURL      string      `json:"web_url"`
	CreatedAt   *Time       `json:"created_at"`
	AccessLevel AccessLevel `json:"access_level"`
}

// ListProjectMembersOptions are the parameters of ProjectMembers.List.
type ListProjectMembersOptions struct {
	ListOptions
	Query *string `url:"query,omitempty"` // search string
}

// MemberOptions are the parameters of Add and Update.
type MemberOptions struct {
	UserID      int         `url:"user_id"`
	AccessLevel AccessLevel `url:"access_level"`
}

// List returns one page of a project's members.
//
// API: GET /projects/:id/members
func (s *ProjectMembersService) List(ctx context.Context, pid any, opt *ListProjectMembersOptions) ([]*Member, *Response, error) {
	return doList[Member](ctx, s.client, http.MethodGet, route("projects/%s/members", pid), opt)
}

// All iterates over the members List returns, on every page from
// opt.Page (the first when 0) to the last, asking for opt.PerPage members a
// request (100 when 0).
//
// API: GET /projects/:id/members
func (s *ProjectMembersService) All(ctx context.Context, pid any, opt *ListProjectMembersOptions, iopts ...IterOption) iter.Seq2[*Member, error] {
	return all[Member](ctx, s.client, route("projects/%s/members", pid), opt, iopts)
}

// Get returns one project member.
//
// API: GET /projects/:id/members/:user_id
func (s *ProjectMembersService) Get(ctx context.Context, pid any, userID int) (*Member, *Response, error) {
	return do[Member](ctx, s.client, http.MethodGet, route("projects/%s/members/%s", pid, userID), nil)
}

// Add makes a user a member. It is idempotent: adding an existing member
// returns it unchanged. A userID below 1 is an *ArgumentError.
//
// API: POST /projects/:id/members
func (s *ProjectMembersService) Add(ctx context.Context, pid any, userID int, level AccessLevel) (*Member, *Response, error) {
	opt, err := memberForm(userID, level)
	if err != nil {
		return nil, nil, err
	}
	return do[Member](ctx, s.client, http.MethodPost, route("projects/%s/members", pid), opt)
}

// Update changes a member's access level.
//
// API: PUT /projects/:id/members/:user_id
func (s *ProjectMembersService) Update(ctx context.Context, pid any, userID int, level AccessLevel) (*Member, *Response, error) {
	opt := &MemberOptions{UserID: userID, AccessLevel: level}
	return do[Member](ctx, s.client, http.MethodPut, route("projects/%s/members/%s", pid, userID), opt)
}

// Remove revokes a member's access. It is idempotent. The body of the
// answer is unreliable (a member record, or a message for a non-member), so
// it is not decoded.
//
// API: DELETE /projects/:id/members/:user_id
func (s *ProjectMembersService) Remove(ctx context.Context, pid any, userID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s/members/%s", pid, userID), nil, nil)
}

// List returns a group's members. The list is not paginated.
//
// API: GET /groups/:id/members
func (s *GroupMembersService) List(ctx context.Context, gid any) ([]*Member, *Response, error) {
	return doList[Member](ctx, s.client, http.MethodGet, route("groups/%s/members", gid), nil)
}

// Add makes a user a group member. An existing member is ErrConflict. A
// userID below 1 is an *ArgumentError.
//
// API: POST /groups/:id/members
func (s *GroupMembersService) Add(ctx context.Context, gid any, userID int, level AccessLevel) (*Member, *Response, error) {
	opt, err := memberForm(userID, level)
	if err != nil {
		return nil, nil, err
	}
	return do[Member](ctx, s.client, http.MethodPost, route("groups/%s/members", gid), opt)
}

// memberForm is the body of the Add calls, where the user id is not a path
// value and so is checked here.
func memberForm(userID int, level AccessLevel) (*MemberOptions, error) {
	if userID < 1 {
		return nil, invalidArg("userID", "must be a positive id, got %d", userID)
	}
	return &MemberOptions{UserID: userID, AccessLevel: level}, nil
}

// Update changes a group member's access level.
//
// API: PUT /groups/:id/members/:user_id
func (s *GroupMembersService) Update(ctx context.Context, gid any, userID int, level AccessLevel) (*Member, *Response, error) {
	opt := &MemberOptions{UserID: userID, AccessLevel: level}
	return do[Member](ctx, s.client, http.MethodPut, route("groups/%s/members/%s", gid, userID), opt)
}

// Remove removes a group member. A non-member is ErrNotFound.
//
// API: DELETE /groups/:id/members/:user_id
func (s *GroupMembersService) Remove(ctx context.Context, gid any, userID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("groups/%s/members/%s", gid, userID), nil, nil)
}
