package collab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Once names an effect to make once however often the code asking for it
// runs: after a retry, a crash or a restart. The server takes no
// idempotency key, so the CreateOnce methods write a marker derived from
// Key into what they create (an HTML comment, kept in the text and not
// shown), and on a later attempt look for it before they create again.
type Once struct {
	// Key names the effect: the same on every attempt of one effect, and
	// different for different effects of the same caller. Required.
	Key string
	// Fresh says that no earlier attempt with Key can have run, such as
	// the first handling of a webhook delivery: the lookup is skipped, and
	// the call costs no more than a plain create. Leave it false when
	// unsure.
	Fresh bool
}

// onceLookback is how many of the newest issues or merge requests
// IssuesService.CreateOnce and MergeRequestsService.CreateOnce look
// through: one page of the largest size.
const onceLookback = 100

// Marker is the text the CreateOnce methods add to a body or description
// for o: "<!-- collab-once " and 32 hex digits of the SHA-256 of Key, then
// " -->". Editing it out of the text makes the next attempt create again.
func (o Once) Marker() string {
	sum := sha256.Sum256([]byte(o.Key))
	return "<!-- collab-once " + hex.EncodeToString(sum[:16]) + " -->"
}

// mark appends o's marker to text, on a paragraph of its own.
func (o Once) mark(text string) string {
	if strings.TrimSpace(text) == "" {
		return o.Marker()
	}
	return text + "\n\n" + o.Marker()
}

// createOnce returns what find finds of an earlier attempt of o, unless o
// is fresh, and what create makes otherwise.
func createOnce[T any](o Once, find func(marker string) (*T, *Response, error), create func() (*T, *Response, error)) (*T, *Response, error) {
	if o.Key == "" {
		return nil, nil, errRequired("Once.Key")
	}
	if !o.Fresh {
		if found, resp, err := find(o.Marker()); err != nil || found != nil {
			return found, resp, err
		}
	}
	return create()
}

// findMarked walks the pages list returns, at most pages of them (0 for
// all), and returns the first item whose text holds marker, or nil.
func findMarked[T any](list func(page int) ([]*T, *Response, error), text func(*T) string, marker string, pages int) (*T, *Response, error) {
	for page := 1; ; {
		items, resp, err := list(page)
		if err != nil {
			return nil, resp, err
		}
		for _, it := range items {
			if strings.Contains(text(it), marker) {
				return it, resp, nil
			}
		}
		if resp == nil || resp.NextPage <= page || (pages > 0 && page >= pages) {
			return nil, resp, nil
		}
		page = resp.NextPage
	}
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// createNoteOnce is CreateIssueNoteOnce and CreateMergeRequestNoteOnce, by
// the kind of the thread.
func (s *NotesService) createNoteOnce(ctx context.Context, kind string, pid any, id int, o Once, opt *CreateNoteOptions) (*Note, *Response, error) {
	if err := checkRequired(opt, "Body"); err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(opt.Body) == "" {
		return nil, nil, errRequired("opt.Body")
	}
	find := func(marker string) (*Note, *Response, error) {
		list := func(page int) ([]*Note, *Response, error) {
			return s.list(ctx, kind, pid, id, &ListOptions{Page: page, PerPage: onceLookback})
		}
		return findMarked(list, func(n *Note) string { return n.Body }, marker, 0)
	}
	return createOnce(o, find, func() (*Note, *Response, error) {
		marked := *opt
		marked.Body = o.mark(opt.Body)
		return s.create(ctx, kind, pid, id, &marked)
	})
}

// CreateIssueNoteOnce comments on an issue once per o.Key, with o's marker
// at the end of opt.Body. Unless o.Fresh, it first reads the issue's
// comments, every page, and returns the one that holds o's marker, if any,
// with the response of the page it was on (200, where a new comment comes
// with 201). issueID is the issue's global ID, not the #IID the project
// shows. A nil opt, a blank Body or an empty key is an *ArgumentError.
//
// API: GET /projects/:id/issues/:issue_id/notes
// API: POST /projects/:id/issues/:issue_id/notes
func (s *NotesService) CreateIssueNoteOnce(ctx context.Context, pid any, issueID int, o Once, opt *CreateNoteOptions) (*Note, *Response, error) {
	return s.createNoteOnce(ctx, "issues", pid, issueID, o, opt)
}

// CreateMergeRequestNoteOnce comments on a merge request once per o.Key,
// as CreateIssueNoteOnce does on an issue. mrID is the merge request's
// global ID, not the !IID the project shows.
//
// API: GET /projects/:id/merge_requests/:merge_request_id/notes
// API: POST /projects/:id/merge_requests/:merge_request_id/notes
func (s *NotesService) CreateMergeRequestNoteOnce(ctx context.Context, pid any, mrID int, o Once, opt *CreateNoteOptions) (*Note, *Response, error) {
	return s.createNoteOnce(ctx, "merge_requests", pid, mrID, o, opt)
}

// CreateOnce opens an issue once per o.Key, with o's marker at the end of
// its description. Unless o.Fresh, it first looks through the 100 issues
// the caller opened last, in any project, and returns the one whose
// description holds the marker, if any, with the response of that list
// (200, where a new issue comes with 201). A nil opt, an empty Title or an
// empty key is an *ArgumentError.
//
// API: GET /issues
// API: POST /projects/:id/issues
func (s *IssuesService) CreateOnce(ctx context.Context, pid any, o Once, opt *CreateIssueOptions) (*Issue, *Response, error) {
	if err := checkRequired(opt, "Title"); err != nil {
		return nil, nil, err
	}
	find := func(marker string) (*Issue, *Response, error) {
		list := func(page int) ([]*Issue, *Response, error) {
			return s.ListMine(ctx, &ListIssuesOptions{ListOptions: ListOptions{Page: page, PerPage: onceLookback}})
		}
		return findMarked(list, func(is *Issue) string { return deref(is.Description) }, marker, 1)
	}
	return createOnce(o, find, func() (*Issue, *Response, error) {
		marked := *opt
		marked.Description = Ptr(o.mark(deref(opt.Description)))
		return s.Create(ctx, pid, &marked)
	})
}

// CreateOnce opens a merge request once per o.Key, with o's marker at the
// end of its description. Unless o.Fresh, it first looks through the 100
// merge requests opened last in the project it goes to (TargetProjectID
// when set, else pid), and returns the one whose description holds the
// marker, if any, with the response of that list (200, where a new merge
// request comes with 201). A nil opt, an empty SourceBranch, TargetBranch
// or Title, or an empty key is an *ArgumentError.
//
// API: GET /projects/:id/merge_requests
// API: POST /projects/:id/merge_requests
func (s *MergeRequestsService) CreateOnce(ctx context.Context, pid any, o Once, opt *CreateMergeRequestOptions) (*MergeRequest, *Response, error) {
	if err := checkRequired(opt, "SourceBranch", "TargetBranch", "Title"); err != nil {
		return nil, nil, err
	}
	in := pid
	if opt.TargetProjectID != nil {
		in = *opt.TargetProjectID
	}
	find := func(marker string) (*MergeRequest, *Response, error) {
		list := func(page int) ([]*MergeRequest, *Response, error) {
			return s.List(ctx, in, &ListMergeRequestsOptions{ListOptions: ListOptions{Page: page, PerPage: onceLookback}})
		}
		return findMarked(list, func(mr *MergeRequest) string { return deref(mr.Description) }, marker, 1)
	}
	return createOnce(o, find, func() (*MergeRequest, *Response, error) {
		marked := *opt
		marked.Description = Ptr(o.mark(deref(opt.Description)))
		return s.Create(ctx, pid, &marked)
	})
}
