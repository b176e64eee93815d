package collab

// MilestonesService handles the milestone (server notes) endpoints.
type MilestonesService struct{ client *Client }
