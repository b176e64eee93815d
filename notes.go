package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"time"
)

// NotesService handles comments (notes) on issues and merge requests. The
// issue or merge request is always given by its global ID, not by the #IID or
// !IID the project shows.
type NotesService struct{ client *Client }

// Note is a comment.
type Note struct {
	ID           int     `json:"id"`
	Body         string  `json:"body"`
	Attachment   *string `json:"attachment"`
	Author       *User   `json:"author"`
	CreatedAt    *Time   `json:"created_at"`
	UpdatedAt    *Time   `json:"updated_at"`
	System       bool    `json:"system"`
	NoteableID   int     `json:"noteable_id"`
	NoteableType string  `json:"noteable_type"`
	// Upvote and Downvote are sent as "upvote?" and "downvote?" by the notes
	// endpoints, and as "upvote" and "downvote" in project events.
	Upvote   bool `json:"upvote?" alias:"upvote"`
	Downvote bool `json:"downvote?" alias:"downvote"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// noteOptions are the parameters the server reads when a comment is saved.
type noteOptions struct {
	Body string `url:"body"`
	// CreatedAt backdates a new comment, as when comments are imported from
	// another system. The server honours it for administrators and project
	// owners only (others get the current time) and ignores it on update.
	CreatedAt *time.Time `url:"created_at,omitempty"`
}

// noteablePath is the path of an issue or a merge request (kind "issues" or
// "merge_requests", by its global id) followed by suffix, whose %s take
// args: the one route of the things that carry comments and awards.
func noteablePath(kind string, pid any, id int, suffix string, args ...any) endpoint {
	return route("projects/%s/"+kind+"/%s"+suffix, append([]any{pid, id}, args...)...)
}

func (s *NotesService) list(ctx context.Context, kind string, pid any, id int, opt *ListOptions) ([]*Note, *Response, error) {
	return doList[Note](ctx, s.client, http.MethodGet, noteablePath(kind, pid, id, "/notes"), opt)
}

func (s *NotesService) iterate(ctx context.Context, kind string, pid any, id int, opt *ListOptions, iopts []IterOption) iter.Seq2[*Note, error] {
	return all[Note](ctx, s.client, noteablePath(kind, pid, id, "/notes"), opt, iopts)
}

func (s *NotesService) get(ctx context.Context, kind string, pid any, id, noteID int) (*Note, *Response, error) {
	return do[Note](ctx, s.client, http.MethodGet, noteablePath(kind, pid, id, "/notes/%s", noteID), nil)
}

func (s *NotesService) save(ctx context.Context, method, kind string, pid any, id int, noteID *int, opt *noteOptions) (*Note, *Response, error) {
	switch {
	case opt.Body == "":
		return nil, nil, errRequired("body")
	case opt.CreatedAt != nil && opt.CreatedAt.IsZero():
		return nil, nil, errRequired("createdAt")
	}
	p := noteablePath(kind, pid, id, "/notes")
	if noteID != nil {
		p = noteablePath(kind, pid, id, "/notes/%s", *noteID)
	}
	return do[Note](ctx, s.client, method, p, opt)
}

func (s *NotesService) delete(ctx context.Context, kind string, pid any, id, noteID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, noteablePath(kind, pid, id, "/notes/%s", noteID), nil, nil)
}

// ListIssueNotes returns one page of an issue's comments. issueID is the
// issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes
func (s *NotesService) ListIssueNotes(ctx context.Context, pid any, issueID int, opt *ListOptions) ([]*Note, *Response, error) {
	return s.list(ctx, "issues", pid, issueID, opt)
}

// AllIssueNotes iterates over the comments of every page of ListIssueNotes.
// issueID is the issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes
func (s *NotesService) AllIssueNotes(ctx context.Context, pid any, issueID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*Note, error] {
	return s.iterate(ctx, "issues", pid, issueID, opt, iopts)
}

// GetIssueNote returns one comment on an issue. issueID is the issue's global
// ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes/:note_id
func (s *NotesService) GetIssueNote(ctx context.Context, pid any, issueID, noteID int) (*Note, *Response, error) {
	return s.get(ctx, "issues", pid, issueID, noteID)
}

// CreateIssueNote comments on an issue. issueID is the issue's global ID, not
// the #IID the project shows. An empty body is an *ArgumentError.
//
// API: POST /projects/:id/issues/:issue_id/notes
func (s *NotesService) CreateIssueNote(ctx context.Context, pid any, issueID int, body string) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPost, "issues", pid, issueID, nil, &noteOptions{Body: body})
}

// UpdateIssueNote edits a comment on an issue. issueID is the issue's global
// ID, not the #IID the project shows. An empty body is an *ArgumentError.
//
// API: PUT /projects/:id/issues/:issue_id/notes/:note_id
func (s *NotesService) UpdateIssueNote(ctx context.Context, pid any, issueID, noteID int, body string) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPut, "issues", pid, issueID, &noteID, &noteOptions{Body: body})
}

// DeleteIssueNote removes a comment on an issue. issueID is the issue's global
// ID, not the #IID the project shows.
//
// API: DELETE /projects/:id/issues/:issue_id/notes/:note_id
func (s *NotesService) DeleteIssueNote(ctx context.Context, pid any, issueID, noteID int) (*Response, error) {
	return s.delete(ctx, "issues", pid, issueID, noteID)
}

// ListMergeRequestNotes returns one page of a merge request's comments. mrID
// is the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) ListMergeRequestNotes(ctx context.Context, pid any, mrID int, opt *ListOptions) ([]*Note, *Response, error) {
	return s.list(ctx, "merge_requests", pid, mrID, opt)
}

// AllMergeRequestNotes iterates over the comments of every page of
// ListMergeRequestNotes. mrID is the merge request's global ID, not the !IID
// the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) AllMergeRequestNotes(ctx context.Context, pid any, mrID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*Note, error] {
	return s.iterate(ctx, "merge_requests", pid, mrID, opt, iopts)
}

// GetMergeRequestNote returns one comment on a merge request. mrID is the
// merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes/:note_id
func (s *NotesService) GetMergeRequestNote(ctx context.Context, pid any, mrID, noteID int) (*Note, *Response, error) {
	return s.get(ctx, "merge_requests", pid, mrID, noteID)
}

// CreateMergeRequestNote comments on a merge request. mrID is the merge
// request's global ID, not the !IID the project shows. An empty body is an
// *ArgumentError.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) CreateMergeRequestNote(ctx context.Context, pid any, mrID int, body string) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPost, "merge_requests", pid, mrID, nil, &noteOptions{Body: body})
}

// UpdateMergeRequestNote edits a comment on a merge request. mrID is the merge
// request's global ID, not the !IID the project shows. An empty body is an
// *ArgumentError.
//
// API: PUT /projects/:id/merge_requests/:merge_request_id/notes/:note_id
func (s *NotesService) UpdateMergeRequestNote(ctx context.Context, pid any, mrID, noteID int, body string) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPut, "merge_requests", pid, mrID, &noteID, &noteOptions{Body: body})
}

// DeleteMergeRequestNote removes a comment on a merge request. mrID is the
// merge request's global ID, not the !IID the project shows.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id/notes/:note_id
func (s *NotesService) DeleteMergeRequestNote(ctx context.Context, pid any, mrID, noteID int) (*Response, error) {
	return s.delete(ctx, "merge_requests", pid, mrID, noteID)
}

// ImportIssueNote comments on an issue with the given creation time, as when
// comments are imported from another system. The server honours createdAt for
// administrators and project owners only; anyone else's comment gets the
// current time. issueID is the issue's global ID, not the #IID the project
// shows. An empty body or a zero createdAt is an *ArgumentError.
//
// API: POST /projects/:id/issues/:issue_id/notes
func (s *NotesService) ImportIssueNote(ctx context.Context, pid any, issueID int, body string, createdAt time.Time) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPost, "issues", pid, issueID, nil, &noteOptions{Body: body, CreatedAt: &createdAt})
}

// ImportMergeRequestNote comments on a merge request with the given creation
// time, as ImportIssueNote does for an issue. mrID is the merge request's
// global ID, not the !IID the project shows.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) ImportMergeRequestNote(ctx context.Context, pid any, mrID int, body string, createdAt time.Time) (*Note, *Response, error) {
	return s.save(ctx, http.MethodPost, "merge_requests", pid, mrID, nil, &noteOptions{Body: body, CreatedAt: &createdAt})
}
