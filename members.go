package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// ProjectMembersService handles /projects/:id/members.
type ProjectMembersService struct{ client *Client }

// GroupMembersService handles /groups/:id/members.
type GroupMembersService struct{ client *Client }

// Member is a project or group member. Group members carry no email.
type Member struct {
	User
	AccessLevel AccessLevel `json:"access_level"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListProjectMembersOptions are the parameters of ProjectMembers.List.
type ListProjectMembersOptions struct {
	ListOptions
	Query *string `url:"query,omitempty"` // search string
}

// AddMemberOptions are the parameters of Add. Both are required.
type AddMemberOptions struct {
	UserID      int         `url:"user_id"`
	AccessLevel AccessLevel `url:"access_level"`
}

// UpdateMemberOptions are the parameters of Update. AccessLevel is required.
type UpdateMemberOptions struct {
	AccessLevel AccessLevel `url:"access_level"`
}

// ListGroupMembersOptions are the parameters of GroupMembers.List and All.
// It has no fields: this server version neither pages nor filters a group's
// members. It is there so that a later version's parameters can be added
// without changing the methods.
type ListGroupMembersOptions struct{}

// List returns one page of a project's members.
//
// API: GET /projects/:id/members
func (s *ProjectMembersService) List(ctx context.Context, pid any, opt *ListProjectMembersOptions) ([]*Member, *Response, error) {
	return doList[Member](ctx, s.client, http.MethodGet, route("projects/%s/members", pid), opt)
}

// All iterates over the members of every page of List.
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
// returns it unchanged. A nil opt, a UserID below 1 or a zero AccessLevel is
// an *ArgumentError.
//
// API: POST /projects/:id/members
func (s *ProjectMembersService) Add(ctx context.Context, pid any, opt *AddMemberOptions) (*Member, *Response, error) {
	if err := checkAddMember(opt); err != nil {
		return nil, nil, err
	}
	return do[Member](ctx, s.client, http.MethodPost, route("projects/%s/members", pid), opt)
}

// Update changes a member's access level. A nil opt or a zero AccessLevel
// is an *ArgumentError.
//
// API: PUT /projects/:id/members/:user_id
func (s *ProjectMembersService) Update(ctx context.Context, pid any, userID int, opt *UpdateMemberOptions) (*Member, *Response, error) {
	return doChecked[Member](ctx, s.client, http.MethodPut, route("projects/%s/members/%s", pid, userID), opt, "AccessLevel")
}

// Remove revokes a member's access. It is idempotent. The body of the
// answer is unreliable (a member record, or a message for a non-member), so
// it is not decoded.
//
// API: DELETE /projects/:id/members/:user_id
func (s *ProjectMembersService) Remove(ctx context.Context, pid any, userID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s/members/%s", pid, userID), nil, nil)
}

// List returns a group's members: this server version sends them all in
// one answer. opt may be nil.
//
// API: GET /groups/:id/members
func (s *GroupMembersService) List(ctx context.Context, gid any, opt *ListGroupMembersOptions) ([]*Member, *Response, error) {
	return doList[Member](ctx, s.client, http.MethodGet, route("groups/%s/members", gid), opt)
}

// All iterates over the members of List. This server version sends them in
// one answer, so it makes one request; a server that pages the list is
// followed page by page.
//
// API: GET /groups/:id/members
func (s *GroupMembersService) All(ctx context.Context, gid any, opt *ListGroupMembersOptions, iopts ...IterOption) iter.Seq2[*Member, error] {
	return all[Member](ctx, s.client, route("groups/%s/members", gid), opt, iopts)
}

// Add makes a user a group member. An existing member is ErrConflict. A nil
// opt, a UserID below 1 or a zero AccessLevel is an *ArgumentError.
//
// API: POST /groups/:id/members
func (s *GroupMembersService) Add(ctx context.Context, gid any, opt *AddMemberOptions) (*Member, *Response, error) {
	if err := checkAddMember(opt); err != nil {
		return nil, nil, err
	}
	return do[Member](ctx, s.client, http.MethodPost, route("groups/%s/members", gid), opt)
}

// checkAddMember checks the body of the Add calls, where the user id is not
// a path value and so is not checked by the route.
func checkAddMember(opt *AddMemberOptions) error {
	switch {
	case opt == nil:
		return errRequired("opt")
	case opt.UserID < 1:
		return invalidArg("opt.UserID", "must be a positive id, got %d", opt.UserID)
	}
	return checkLevel(opt.AccessLevel)
}

// checkLevel refuses the zero level, which is an option left unset: no
// server accepts it. Other values go to the server, which names its own set.
func checkLevel(l AccessLevel) error {
	if l == NoAccess {
		return errRequired("opt.AccessLevel")
	}
	return nil
}

// Update changes a group member's access level. A nil opt or a zero
// AccessLevel is an *ArgumentError.
//
// API: PUT /groups/:id/members/:user_id
func (s *GroupMembersService) Update(ctx context.Context, gid any, userID int, opt *UpdateMemberOptions) (*Member, *Response, error) {
	return doChecked[Member](ctx, s.client, http.MethodPut, route("groups/%s/members/%s", gid, userID), opt, "AccessLevel")
}

// Remove removes a group member. A non-member is ErrNotFound.
//
// API: DELETE /groups/:id/members/:user_id
func (s *GroupMembersService) Remove(ctx context.Context, gid any, userID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("groups/%s/members/%s", gid, userID), nil, nil)
}
