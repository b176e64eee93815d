package collab

// SettingsService handles the application settings endpoints.
type SettingsService struct{ client *Client }
