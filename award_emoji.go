package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
)

// AwardEmojiService handles award emoji on issues, merge requests and their notes.
type AwardEmojiService struct{ client *Client }

// AwardEmoji is an emoji award.
type AwardEmoji struct {
	ID            int    `json:"id"`
	Name          string `json:"name"` // without colons
	User          *User  `json:"user"`
	CreatedAt     *Time  `json:"created_at"`
	UpdatedAt     *Time  `json:"updated_at"`
	AwardableID   int    `json:"awardable_id"`
	AwardableType string `json:"awardable_type"` // Issue, MergeRequest or Note

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

type awardName struct {
	Name string `url:"name"`
}

// noNote marks an award on the issue or merge request itself.
const noNote = -1

// awardable builds the award path of an issue or merge request (noteID
// noNote) or of one of their notes, and of one award when awardID is not 0.
func awardable(pid any, kind string, id, noteID, awardID int) endpoint {
	var suffix string
	var args []any
	if noteID != noNote {
		if noteID <= 0 {
			return endpoint{err: invalidArg("noteID", "must be positive, got %d", noteID)}
		}
		suffix, args = "/notes/%s", append(args, noteID)
	}
	suffix += "/award_emoji"
	if awardID != 0 {
		suffix, args = suffix+"/%s", append(args, awardID)
	}
	return noteablePath(kind, pid, id, suffix, args...)
}

func (s *AwardEmojiService) list(ctx context.Context, kind string, pid any, id, noteID int, opt *ListOptions) ([]*AwardEmoji, *Response, error) {
	return doList[AwardEmoji](ctx, s.client, http.MethodGet, awardable(pid, kind, id, noteID, 0), opt)
}

func (s *AwardEmojiService) iterate(ctx context.Context, kind string, pid any, id, noteID int, opt *ListOptions, iopts []IterOption) iter.Seq2[*AwardEmoji, error] {
	return all[AwardEmoji](ctx, s.client, awardable(pid, kind, id, noteID, 0), opt, iopts)
}

func (s *AwardEmojiService) get(ctx context.Context, kind string, pid any, id, noteID, awardID int) (*AwardEmoji, *Response, error) {
	if awardID <= 0 {
		return nil, nil, invalidArg("awardID", "must be positive, got %d", awardID)
	}
	return do[AwardEmoji](ctx, s.client, http.MethodGet, awardable(pid, kind, id, noteID, awardID), nil)
}

func (s *AwardEmojiService) create(ctx context.Context, kind string, pid any, id, noteID int, name string) (*AwardEmoji, *Response, error) {
	switch {
	case name == "":
		return nil, nil, errRequired("name")
	case strings.Contains(name, ":"):
		return nil, nil, invalidArg("name", `is written without colons, such as "thumbsup", got %q`, name)
	}
	return do[AwardEmoji](ctx, s.client, http.MethodPost, awardable(pid, kind, id, noteID, 0), &awardName{name})
}

func (s *AwardEmojiService) delete(ctx context.Context, kind string, pid any, id, noteID, awardID int) (*AwardEmoji, *Response, error) {
	if awardID <= 0 {
		return nil, nil, invalidArg("awardID", "must be positive, got %d", awardID)
	}
	return do[AwardEmoji](ctx, s.client, http.MethodDelete, awardable(pid, kind, id, noteID, awardID), nil)
}

// ListIssueAwards returns one page of the awards on an issue. issueID is the
// issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/award_emoji
func (s *AwardEmojiService) ListIssueAwards(ctx context.Context, pid any, issueID int, opt *ListOptions) ([]*AwardEmoji, *Response, error) {
	return s.list(ctx, "issues", pid, issueID, noNote, opt)
}

// AllIssueAwards iterates over the awards of every page of ListIssueAwards.
// issueID is the issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/award_emoji
func (s *AwardEmojiService) AllIssueAwards(ctx context.Context, pid any, issueID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*AwardEmoji, error] {
	return s.iterate(ctx, "issues", pid, issueID, noNote, opt, iopts)
}

// GetIssueAward returns one award on an issue. issueID is the issue's global
// ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/award_emoji/:award_id
func (s *AwardEmojiService) GetIssueAward(ctx context.Context, pid any, issueID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.get(ctx, "issues", pid, issueID, noNote, awardID)
}

// CreateIssueAward awards an emoji to an issue. issueID is the issue's global
// ID, not the #IID the project shows. name is the emoji's name without colons,
// such as "thumbsup"; an empty name or one with a colon is an *ArgumentError,
// an unknown one ErrNotFound.
//
// API: POST /projects/:id/issues/:issue_id/award_emoji
func (s *AwardEmojiService) CreateIssueAward(ctx context.Context, pid any, issueID int, name string) (*AwardEmoji, *Response, error) {
	return s.create(ctx, "issues", pid, issueID, noNote, name)
}

// DeleteIssueAward removes an award from an issue. issueID is the issue's
// global ID, not the #IID the project shows. Only the award's author or an
// administrator may; anyone else gets ErrUnauthorized.
//
// API: DELETE /projects/:id/issues/:issue_id/award_emoji/:award_id
func (s *AwardEmojiService) DeleteIssueAward(ctx context.Context, pid any, issueID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.delete(ctx, "issues", pid, issueID, noNote, awardID)
}

// ListMergeRequestAwards returns one page of the awards on a merge request.
// mrID is the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/award_emoji
func (s *AwardEmojiService) ListMergeRequestAwards(ctx context.Context, pid any, mrID int, opt *ListOptions) ([]*AwardEmoji, *Response, error) {
	return s.list(ctx, "merge_requests", pid, mrID, noNote, opt)
}

// AllMergeRequestAwards iterates over the awards of every page of
// ListMergeRequestAwards. mrID is the merge request's global ID, not the !IID
// the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/award_emoji
func (s *AwardEmojiService) AllMergeRequestAwards(ctx context.Context, pid any, mrID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*AwardEmoji, error] {
	return s.iterate(ctx, "merge_requests", pid, mrID, noNote, opt, iopts)
}

// GetMergeRequestAward returns one award on a merge request. mrID is the merge
// request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/award_emoji/:award_id
func (s *AwardEmojiService) GetMergeRequestAward(ctx context.Context, pid any, mrID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.get(ctx, "merge_requests", pid, mrID, noNote, awardID)
}

// CreateMergeRequestAward awards an emoji to a merge request. mrID is the
// merge request's global ID, not the !IID the project shows. name is the
// emoji's name without colons, such as "thumbsup"; an empty name or one with a
// colon is an *ArgumentError, an unknown one ErrNotFound.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/award_emoji
func (s *AwardEmojiService) CreateMergeRequestAward(ctx context.Context, pid any, mrID int, name string) (*AwardEmoji, *Response, error) {
	return s.create(ctx, "merge_requests", pid, mrID, noNote, name)
}

// DeleteMergeRequestAward removes an award from a merge request. mrID is the
// merge request's global ID, not the !IID the project shows. Only the award's
// author or an administrator may; anyone else gets ErrUnauthorized.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id/award_emoji/:award_id
func (s *AwardEmojiService) DeleteMergeRequestAward(ctx context.Context, pid any, mrID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.delete(ctx, "merge_requests", pid, mrID, noNote, awardID)
}

// ListIssueNoteAwards returns one page of the awards on a comment on an issue.
// issueID is the issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) ListIssueNoteAwards(ctx context.Context, pid any, issueID int, noteID int, opt *ListOptions) ([]*AwardEmoji, *Response, error) {
	return s.list(ctx, "issues", pid, issueID, noteID, opt)
}

// AllIssueNoteAwards iterates over the awards of every page of
// ListIssueNoteAwards. issueID is the issue's global ID, not the #IID the
// project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) AllIssueNoteAwards(ctx context.Context, pid any, issueID int, noteID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*AwardEmoji, error] {
	return s.iterate(ctx, "issues", pid, issueID, noteID, opt, iopts)
}

// GetIssueNoteAward returns one award on a comment on an issue. issueID is the
// issue's global ID, not the #IID the project shows.
//
// API: GET /projects/:id/issues/:issue_id/notes/:note_id/award_emoji/:award_id
func (s *AwardEmojiService) GetIssueNoteAward(ctx context.Context, pid any, issueID int, noteID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.get(ctx, "issues", pid, issueID, noteID, awardID)
}

// CreateIssueNoteAward awards an emoji to a comment on an issue. issueID is
// the issue's global ID, not the #IID the project shows. name is the emoji's
// name without colons, such as "thumbsup"; an empty name or one with a colon
// is an *ArgumentError, an unknown one ErrNotFound.
//
// API: POST /projects/:id/issues/:issue_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) CreateIssueNoteAward(ctx context.Context, pid any, issueID int, noteID int, name string) (*AwardEmoji, *Response, error) {
	return s.create(ctx, "issues", pid, issueID, noteID, name)
}

// DeleteIssueNoteAward removes an award from a comment on an issue. issueID is
// the issue's global ID, not the #IID the project shows. Only the award's
// author or an administrator may; anyone else gets ErrUnauthorized.
//
// API: DELETE /projects/:id/issues/:issue_id/notes/:note_id/award_emoji/:award_id
func (s *AwardEmojiService) DeleteIssueNoteAward(ctx context.Context, pid any, issueID int, noteID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.delete(ctx, "issues", pid, issueID, noteID, awardID)
}

// ListMergeRequestNoteAwards returns one page of the awards on a comment on a
// merge request. mrID is the merge request's global ID, not the !IID the
// project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) ListMergeRequestNoteAwards(ctx context.Context, pid any, mrID int, noteID int, opt *ListOptions) ([]*AwardEmoji, *Response, error) {
	return s.list(ctx, "merge_requests", pid, mrID, noteID, opt)
}

// AllMergeRequestNoteAwards iterates over the awards of every page of
// ListMergeRequestNoteAwards. mrID is the merge request's global ID, not the
// !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) AllMergeRequestNoteAwards(ctx context.Context, pid any, mrID int, noteID int, opt *ListOptions, iopts ...IterOption) iter.Seq2[*AwardEmoji, error] {
	return s.iterate(ctx, "merge_requests", pid, mrID, noteID, opt, iopts)
}

// GetMergeRequestNoteAward returns one award on a comment on a merge request.
// mrID is the merge request's global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji/:award_id
func (s *AwardEmojiService) GetMergeRequestNoteAward(ctx context.Context, pid any, mrID int, noteID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.get(ctx, "merge_requests", pid, mrID, noteID, awardID)
}

// CreateMergeRequestNoteAward awards an emoji to a comment on a merge request.
// mrID is the merge request's global ID, not the !IID the project shows. name
// is the emoji's name without colons, such as "thumbsup"; an empty name or one
// with a colon is an *ArgumentError, an unknown one ErrNotFound.
//
// API: POST /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji
func (s *AwardEmojiService) CreateMergeRequestNoteAward(ctx context.Context, pid any, mrID int, noteID int, name string) (*AwardEmoji, *Response, error) {
	return s.create(ctx, "merge_requests", pid, mrID, noteID, name)
}

// DeleteMergeRequestNoteAward removes an award from a comment on a merge
// request. mrID is the merge request's global ID, not the !IID the project
// shows. Only the award's author or an administrator may; anyone else gets
// ErrUnauthorized.
//
// API: DELETE /projects/:id/merge_requests/:merge_request_id/notes/:note_id/award_emoji/:award_id
func (s *AwardEmojiService) DeleteMergeRequestNoteAward(ctx context.Context, pid any, mrID int, noteID int, awardID int) (*AwardEmoji, *Response, error) {
	return s.delete(ctx, "merge_requests", pid, mrID, noteID, awardID)
}
