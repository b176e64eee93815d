package collab

// NotesService handles the note (server notes) endpoints.
type NotesService struct{ client *Client }
