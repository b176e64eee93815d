package collab

// GroupsService handles the group endpoints.
type GroupsService struct{ client *Client }
