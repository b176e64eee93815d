package collab

// JobQueueService handles the background-job metrics endpoints.
type JobQueueService struct{ client *Client }
