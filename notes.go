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

// CreateNoteOptions are the parameters of CreateIssueNote and
// CreateMergeRequestNote. Body is required.
type CreateNoteOptions struct {
	Body string `url:"body"`

	// CreatedAt backdates the comment, as when comments are imported from
	// another system. The server honours it for administrators and project
	// owners only; anyone else's comment gets the current time. Nil is now.
	CreatedAt *time.Time `url:"created_at,omitempty"`
}

// UpdateNoteOptions are the parameters of UpdateIssueNote and
// UpdateMergeRequestNote. Body is required.
type UpdateNoteOptions struct {
	Body string `url:"body"`
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

// create comments on the thread kind/id.
func (s *NotesService) create(ctx context.Context, kind string, pid any, id int, opt *CreateNoteOptions) (*Note, *Response, error) {
	if err := checkRequired(opt, "Body"); err != nil {
		return nil, nil, err
	}
	if opt.CreatedAt != nil && opt.CreatedAt.IsZero() {
		return nil, nil, invalidArg("opt.CreatedAt", "is the zero time; leave it nil for the current time")
	}
	return do[Note](ctx, s.client, http.MethodPost, noteablePath(kind, pid, id, "/notes"), opt)
}

// update edits comment noteID of the thread kind/id.
func (s *NotesService) update(ctx context.Context, kind string, pid any, id, noteID int, opt *UpdateNoteOptions) (*Note, *Response, error) {
	return doChecked[Note](ctx, s.client, http.MethodPut, noteablePath(kind, pid, id, "/notes/%s", noteID), opt, "Body")
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
// the #IID the project shows. A nil opt, an empty Body or a CreatedAt that
// points to the zero time is an *ArgumentError.
//
// API: POST /projects/:id/issues/:issue_id/notes
func (s *NotesService) CreateIssueNote(ctx context.Context, pid any, issueID int, opt *CreateNoteOptions) (*Note, *Response, error) {
	return s.create(ctx, "issues", pid, issueID, opt)
}

// UpdateIssueNote edits a comment on an issue. issueID is the issue's global
// ID, not the #IID the project shows. A nil opt or an empty Body is an
// *ArgumentError.
//
// API: PUT /projects/:id/issues/:issue_id/notes/:note_id
func (s *NotesService) UpdateIssueNote(ctx context.Context, pid any, issueID, noteID int, opt *UpdateNoteOptions) (*Note, *Response, error) {
	return s.update(ctx, "issues", pid, issueID, noteID, opt)
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

// CreateMergeRequestNote comments on a merge request, as CreateIssueNote
// does on an issue. mrID is the merge request's global ID, not the !IID the
// project shows.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) CreateMergeRequestNote(ctx context.Context, pid any, mrID int, opt *CreateNoteOptions) (*Note, *Response, error) {
	return s.create(ctx, "merge_requests", pid, mrID, opt)
}

// UpdateMergeRequestNote edits a comment on a merge request. mrID is the merge
// request's global ID, not the !IID the project shows. A nil opt or an empty
// Body is an *ArgumentError.
//
// API: PUT /projects/:id/merge_requests/:merge_request_id/notes/:note_id
func (s *NotesService) UpdateMergeRequestNote(ctx context.Context, pid any, mrID, noteID int, opt *UpdateNoteOptions) (*Note, *Response, error) {
	return s.update(ctx, "merge_requests", pid, mrID, noteID, opt)
}

// DeleteMergeRequestNote removes a comment on a merge request. mrID is the
// merge request's global ID, not the !IID the project shows.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id/notes/:note_id
func (s *NotesService) DeleteMergeRequestNote(ctx context.Context, pid any, mrID, noteID int) (*Response, error) {
	return s.delete(ctx, "merge_requests", pid, mrID, noteID)
}
