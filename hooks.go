package collab

// HooksService handles the project hook endpoints.
type HooksService struct{ client *Client }
