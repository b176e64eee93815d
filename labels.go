package collab

// LabelsService handles the label endpoints.
type LabelsService struct{ client *Client }
