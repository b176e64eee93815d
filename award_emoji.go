package collab

// AwardEmojiService handles the award emoji endpoints.
type AwardEmojiService struct{ client *Client }
