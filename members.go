package collab

// ProjectMembersService handles /projects/:id/members.
type ProjectMembersService struct{ client *Client }

// GroupMembersService handles /groups/:id/members.
type GroupMembersService struct{ client *Client }
