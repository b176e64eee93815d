package collab

// BranchesService handles the branch endpoints.
type BranchesService struct{ client *Client }
