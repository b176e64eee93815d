package collab

// MergeRequestsService handles the merge request endpoints.
type MergeRequestsService struct{ client *Client }
