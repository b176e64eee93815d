package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// BranchesService handles the repository branch endpoints.
type BranchesService struct{ client *Client }

// Branch is a repository branch.
type Branch struct {
	Name               string        `json:"name"`
	Protected          bool          `json:"protected"`
	DevelopersCanPush  bool          `json:"developers_can_push"`
	DevelopersCanMerge bool          `json:"developers_can_merge"`
	Commit             *BranchCommit `json:"commit"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BranchCommit is the commit a branch points at. Servers send the parents
// and people either nested (Parents, Author, Committer) or flat (ParentIDs,
// AuthorName, AuthorEmail, CommitterName, CommitterEmail), or both.
type BranchCommit struct {
	ID             string          `json:"id"`
	Parents        []*CommitParent `json:"parents"`
	ParentIDs      []string        `json:"parent_ids"`
	Tree           string          `json:"tree"`
	Message        string          `json:"message"`
	Author         *EventPerson    `json:"author"`
	Committer      *EventPerson    `json:"committer"`
	AuthorName     string          `json:"author_name"`
	AuthorEmail    string          `json:"author_email"`
	CommitterName  string          `json:"committer_name"`
	CommitterEmail string          `json:"committer_email"`
	AuthoredDate   *Time           `json:"authored_date"`
	CommittedDate  *Time           `json:"committed_date"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CommitParent is a parent of a commit.
type CommitParent struct {
	ID string `json:"id"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListBranchesOptions are the parameters of Branches.List and All. It has no
// fields: this server version neither pages nor filters the branches. It is
// there so that a later version's parameters can be added without changing
// the methods.
type ListBranchesOptions struct{}

// List returns every branch of a project: this server version sends them all
// in one answer. opt may be nil.
//
// API: GET /projects/:id/repository/branches
func (s *BranchesService) List(ctx context.Context, pid any, opt *ListBranchesOptions) ([]*Branch, *Response, error) {
	return doList[Branch](ctx, s.client, http.MethodGet, route("projects/%s/repository/branches", pid), opt)
}

// All iterates over the branches of List. This server version sends them in
// one answer, so it makes one request; a server that pages the list is
// followed page by page.
//
// API: GET /projects/:id/repository/branches
func (s *BranchesService) All(ctx context.Context, pid any, opt *ListBranchesOptions, iopts ...IterOption) iter.Seq2[*Branch, error] {
	return all[Branch](ctx, s.client, route("projects/%s/repository/branches", pid), opt, iopts)
}

// Get returns one branch. A name such as "feature/x" is escaped into one
// path segment; an empty name is an *ArgumentError.
//
// API: GET /projects/:id/repository/branches/:branch
func (s *BranchesService) Get(ctx context.Context, pid any, branch string) (*Branch, *Response, error) {
	return do[Branch](ctx, s.client, http.MethodGet, branchPath(pid, branch, ""), nil)
}

// Protect protects a branch. It is idempotent.
//
// API: PUT /projects/:id/repository/branches/:branch/protect
func (s *BranchesService) Protect(ctx context.Context, pid any, branch string) (*Branch, *Response, error) {
	return do[Branch](ctx, s.client, http.MethodPut, branchPath(pid, branch, "/protect"), nil)
}

// Unprotect removes a branch's protection. It is idempotent.
//
// API: PUT /projects/:id/repository/branches/:branch/unprotect
func (s *BranchesService) Unprotect(ctx context.Context, pid any, branch string) (*Branch, *Response, error) {
	return do[Branch](ctx, s.client, http.MethodPut, branchPath(pid, branch, "/unprotect"), nil)
}

// CreateBranchOptions are the parameters of Branches.Create; both are
// required.
type CreateBranchOptions struct {
	Branch string `url:"branch_name"` // the new branch's name, such as "feature/x"
	Ref    string `url:"ref"`         // the branch, tag or commit it starts at
}

// Create makes a branch at a ref and returns it. It needs push access. A
// name git refuses, a name taken, a ref that names nothing or a refusal by
// a repository hook is ErrBadRequest with the server's reason, such as
// "Branch already exists".
//
// API: POST /projects/:id/repository/branches
func (s *BranchesService) Create(ctx context.Context, pid any, opt *CreateBranchOptions) (*Branch, *Response, error) {
	return doChecked[Branch](ctx, s.client, http.MethodPost, route("projects/%s/repository/branches", pid), opt, "Branch", "Ref")
}

// Delete removes a branch. A missing branch is ErrNotFound; the default
// branch, a protected branch or a caller without push access is
// ErrMethodNotAllowed, with the server's reason; any other failure is
// ErrBadRequest.
//
// API: DELETE /projects/:id/repository/branches/:branch
func (s *BranchesService) Delete(ctx context.Context, pid any, branch string) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, branchPath(pid, branch, ""), nil, nil)
}

// branchPath is the path of one branch, refusing an empty name by its own
// argument name.
func branchPath(pid any, branch, suffix string) endpoint {
	if branch == "" {
		return endpoint{err: errRequired("branch")}
	}
	return route("projects/%s/repository/branches/%s"+suffix, pid, branch)
}
