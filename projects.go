package collab

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"

	"github.com/collabsvc/collab/internal/wire"
)

// ProjectsService handles the project endpoints.
type ProjectsService struct{ client *Client }

// Project is a project record. Group-embedded projects leave some fields out.
type Project struct {
	ID                       int                `json:"id"`
	Name                     string             `json:"name"`
	Path                     string             `json:"path"`
	NameWithNamespace        string             `json:"name_with_namespace"`
	PathWithNamespace        string             `json:"path_with_namespace"`
	Description              *string            `json:"description"`
	DefaultBranch            string             `json:"default_branch"`
	Public                   bool               `json:"public"`
	VisibilityLevel          VisibilityLevel    `json:"visibility_level"`
	SSHURLToRepo             string             `json:"ssh_url_to_repo"`
	HTTPURLToRepo            string             `json:"http_url_to_repo"`
	WebURL                   string             `json:"web_url"`
	TagList                  []string           `json:"tag_list"`
	Owner                    *User              `json:"owner"` // nil for a group's project
	IssuesEnabled            bool               `json:"issues_enabled"`
	MergeRequestsEnabled     bool               `json:"merge_requests_enabled"`
	BuildsEnabled            bool               `json:"builds_enabled"`
	WikiEnabled              bool               `json:"wiki_enabled"`
	SnippetsEnabled          bool               `json:"snippets_enabled"`
	ContainerRegistryEnabled bool               `json:"container_registry_enabled"`
	PublicBuilds             bool               `json:"public_builds"`
	SharedRunnersEnabled     bool               `json:"shared_runners_enabled"`
	Archived                 bool               `json:"archived"`
	OpenIssuesCount          int                `json:"open_issues_count"`
	ForksCount               int                `json:"forks_count"`
	StarCount                int                `json:"star_count"`
	CreatorID                int                `json:"creator_id"`
	CreatedAt                *Time              `json:"created_at"`
	LastActivityAt           *Time              `json:"last_activity_at"`
	Namespace                *ProjectNamespace  `json:"namespace"`
	Permissions              *Permissions       `json:"permissions"`
	AvatarURL                *string            `json:"avatar_url"`
	RunnersToken             Secret             `json:"runners_token,omitempty"`
	ForkedFromProject        *ForkedFromProject `json:"forked_from_project"`
	SharedWithGroups         []*SharedGroup     `json:"shared_with_groups"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ProjectNamespace is the namespace embedded in a project: a user's or a
// group's. OwnerID is nil for a group; Avatar, ShareWithGroupLock,
// VisibilityLevel and RequestAccessEnabled come with groups.
type ProjectNamespace struct {
	ID                   int              `json:"id"`
	Name                 string           `json:"name"`
	Path                 string           `json:"path"`
	Description          *string          `json:"description"`
	OwnerID              *int             `json:"owner_id"`
	CreatedAt            *Time            `json:"created_at"`
	UpdatedAt            *Time            `json:"updated_at"`
	Avatar               *NamespaceAvatar `json:"avatar"`
	ShareWithGroupLock   bool             `json:"share_with_group_lock"`
	VisibilityLevel      VisibilityLevel  `json:"visibility_level"`
	RequestAccessEnabled bool             `json:"request_access_enabled"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// NamespaceAvatar is a group namespace's avatar. URL is nil when it has none.
type NamespaceAvatar struct {
	URL *string `json:"url"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Permissions is the caller's access to a project, directly and through its group.
type Permissions struct {
	ProjectAccess *AccessInfo `json:"project_access"`
	GroupAccess   *AccessInfo `json:"group_access"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// AccessInfo is one access grant in Permissions.
type AccessInfo struct {
	AccessLevel       AccessLevel `json:"access_level"`
	NotificationLevel int         `json:"notification_level"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ForkedFromProject is the brief source project of a fork.
type ForkedFromProject struct {
	ID                int    `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
	HTTPURLToRepo     string `json:"http_url_to_repo"`
	WebURL            string `json:"web_url"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// SharedGroup is a group a project is shared with.
type SharedGroup struct {
	GroupID          int         `json:"group_id"`
	GroupName        string      `json:"group_name"`
	GroupAccessLevel AccessLevel `json:"group_access_level"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListProjectsOptions filters the project lists.
type ListProjectsOptions struct {
	ListOptions
	Archived   *bool           `url:"archived,omitempty"`
	Visibility *string         `url:"visibility,omitempty"` // public, internal or private
	OrderBy    *ProjectOrderBy `url:"order_by,omitempty"`   // created_at when nil
	Sort       *SortOrder      `url:"sort,omitempty"`       // descending when nil
	Search     *string         `url:"search,omitempty"`
}

// List returns one page of the projects the caller can access.
//
// API: GET /projects
func (s *ProjectsService) List(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects"), opt)
}

// All iterates over the projects of every page of List.
//
// API: GET /projects
func (s *ProjectsService) All(ctx context.Context, opt *ListProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects"), opt, iopts)
}

// ListOwned returns one page of the projects the caller owns.
//
// API: GET /projects/owned
func (s *ProjectsService) ListOwned(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/owned"), opt)
}

// AllOwned iterates over the projects of every page of ListOwned.
//
// API: GET /projects/owned
func (s *ProjectsService) AllOwned(ctx context.Context, opt *ListProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/owned"), opt, iopts)
}

// ListStarred returns one page of the projects the caller starred.
//
// API: GET /projects/starred
func (s *ProjectsService) ListStarred(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/starred"), opt)
}

// AllStarred iterates over the projects of every page of ListStarred.
//
// API: GET /projects/starred
func (s *ProjectsService) AllStarred(ctx context.Context, opt *ListProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/starred"), opt, iopts)
}

// ListEvery returns one page of every project on the server, not only those
// the caller can access. Administrators only. (The endpoint's "all" is
// "every" here because All, in this package, names the iterators.)
//
// API: GET /projects/all
func (s *ProjectsService) ListEvery(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/all"), opt)
}

// AllEvery iterates over the projects of every page of ListEvery.
//
// API: GET /projects/all
func (s *ProjectsService) AllEvery(ctx context.Context, opt *ListProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/all"), opt, iopts)
}

// Get returns one project, by id or "namespace/name".
//
// API: GET /projects/:id
func (s *ProjectsService) Get(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodGet, route("projects/%s", pid), nil)
}

// ProjectEvent is one entry of a project's activity.
type ProjectEvent struct {
	Title          *string   `json:"title"`
	ProjectID      int       `json:"project_id"`
	ActionName     string    `json:"action_name"`
	TargetID       *int      `json:"target_id"`
	TargetType     *string   `json:"target_type"`
	TargetTitle    *string   `json:"target_title"`
	AuthorID       int       `json:"author_id"`
	Author         *User     `json:"author"`
	AuthorUsername string    `json:"author_username"`
	CreatedAt      *Time     `json:"created_at"`
	Data           *PushData `json:"data"`
	Note           *Note     `json:"note"` // the comment of a "commented on" event

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// EventPerson is a commit author.
type EventPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ListEvents returns one page of a project's activity, newest first.
//
// API: GET /projects/:id/events
func (s *ProjectsService) ListEvents(ctx context.Context, pid any, opt *ListOptions) ([]*ProjectEvent, *Response, error) {
	return doList[ProjectEvent](ctx, s.client, http.MethodGet, route("projects/%s/events", pid), opt)
}

// AllEvents iterates over the events of every page of ListEvents.
//
// API: GET /projects/:id/events
func (s *ProjectsService) AllEvents(ctx context.Context, pid any, opt *ListOptions, iopts ...IterOption) iter.Seq2[*ProjectEvent, error] {
	return all[ProjectEvent](ctx, s.client, route("projects/%s/events", pid), opt, iopts)
}

// CreateProjectOptions are the parameters of Create and CreateForUser.
type CreateProjectOptions struct {
	Name                     string           `url:"name"`
	Path                     *string          `url:"path,omitempty"`
	NamespaceID              *int             `url:"namespace_id,omitempty"`
	Description              *string          `url:"description,omitempty"`
	IssuesEnabled            *bool            `url:"issues_enabled,omitempty"`
	MergeRequestsEnabled     *bool            `url:"merge_requests_enabled,omitempty"`
	BuildsEnabled            *bool            `url:"builds_enabled,omitempty"`
	WikiEnabled              *bool            `url:"wiki_enabled,omitempty"`
	SnippetsEnabled          *bool            `url:"snippets_enabled,omitempty"`
	ContainerRegistryEnabled *bool            `url:"container_registry_enabled,omitempty"`
	Public                   *bool            `url:"public,omitempty"` // true equals visibility level 20
	VisibilityLevel          *VisibilityLevel `url:"visibility_level,omitempty"`
	ImportURL                *string          `url:"import_url,omitempty"`
	PublicBuilds             *bool            `url:"public_builds,omitempty"`
	SharedRunnersEnabled     *bool            `url:"shared_runners_enabled,omitempty"`
	// DefaultBranch is read by CreateForUser only; the server ignores it on Create.
	DefaultBranch *string `url:"default_branch,omitempty"`
}

// Create makes a project owned by the caller. A nil opt or an empty Name is
// an *ArgumentError.
//
// API: POST /projects
func (s *ProjectsService) Create(ctx context.Context, opt *CreateProjectOptions) (*Project, *Response, error) {
	return doChecked[Project](ctx, s.client, http.MethodPost, route("projects"), opt, "Name")
}

// CreateForUser makes a project owned by another user. Administrators only.
// A nil opt or an empty Name is an *ArgumentError.
//
// API: POST /projects/user/:user_id
func (s *ProjectsService) CreateForUser(ctx context.Context, userID int, opt *CreateProjectOptions) (*Project, *Response, error) {
	return doChecked[Project](ctx, s.client, http.MethodPost, route("projects/user/%s", userID), opt, "Name")
}

// UpdateProjectOptions are the parameters of Update; nil fields are unchanged.
type UpdateProjectOptions struct {
	Name                     *string          `url:"name,omitempty"`
	Path                     *string          `url:"path,omitempty"`
	Description              *string          `url:"description,omitempty"`
	DefaultBranch            *string          `url:"default_branch,omitempty"`
	IssuesEnabled            *bool            `url:"issues_enabled,omitempty"`
	MergeRequestsEnabled     *bool            `url:"merge_requests_enabled,omitempty"`
	BuildsEnabled            *bool            `url:"builds_enabled,omitempty"`
	WikiEnabled              *bool            `url:"wiki_enabled,omitempty"`
	SnippetsEnabled          *bool            `url:"snippets_enabled,omitempty"`
	ContainerRegistryEnabled *bool            `url:"container_registry_enabled,omitempty"`
	Public                   *bool            `url:"public,omitempty"`
	VisibilityLevel          *VisibilityLevel `url:"visibility_level,omitempty"`
	PublicBuilds             *bool            `url:"public_builds,omitempty"`
	SharedRunnersEnabled     *bool            `url:"shared_runners_enabled,omitempty"`
}

// Update changes a project.
//
// API: PUT /projects/:id
func (s *ProjectsService) Update(ctx context.Context, pid any, opt *UpdateProjectOptions) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPut, route("projects/%s", pid), opt)
}

// Fork copies a project into the caller's namespace.
//
// API: POST /projects/fork/:id
func (s *ProjectsService) Fork(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPost, route("projects/fork/%s", pid), nil)
}

// Star stars a project. Starring it again is ErrNotModified.
//
// API: POST /projects/:id/star
func (s *ProjectsService) Star(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPost, route("projects/%s/star", pid), nil)
}

// Unstar removes the caller's star. Unstarring again is ErrNotModified.
//
// API: DELETE /projects/:id/star
func (s *ProjectsService) Unstar(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodDelete, route("projects/%s/star", pid), nil)
}

// Archive makes a project read-only. It is idempotent; admin or owner only.
//
// API: POST /projects/:id/archive
func (s *ProjectsService) Archive(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPost, route("projects/%s/archive", pid), nil)
}

// Unarchive reverses Archive. It is idempotent; admin or owner only.
//
// API: POST /projects/:id/unarchive
func (s *ProjectsService) Unarchive(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPost, route("projects/%s/unarchive", pid), nil)
}

// Delete removes a project and everything in it. The removal is asynchronous
// on deployed servers.
//
// API: DELETE /projects/:id
func (s *ProjectsService) Delete(ctx context.Context, pid any) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s", pid), nil, nil)
}

// ProjectFile is the result of UploadFile, for use in descriptions and comments.
type ProjectFile struct {
	Alt      string `json:"alt"`
	URL      string `json:"url"` // relative to the project's web URL
	IsImage  bool   `json:"is_image"`
	Markdown string `json:"markdown"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// UploadFile streams r to the project as multipart field "file" without
// holding it in memory. A plain reader is sent once and never retried. The
// server answers null for a missing or oversized file; that is an error. A
// nil r or an empty filename is an *ArgumentError.
//
// API: POST /projects/:id/uploads
func (s *ProjectsService) UploadFile(ctx context.Context, pid any, r io.Reader, filename string) (*ProjectFile, *Response, error) {
	switch {
	case r == nil:
		return nil, nil, errRequired("r")
	case filename == "":
		return nil, nil, errRequired("filename")
	}
	p := route("projects/%s/uploads", pid)
	if p.err != nil {
		return nil, nil, p.err
	}
	req, finish, err := s.client.NewUploadRequest(ctx, p.s, "file", filename, r)
	if err != nil {
		return nil, nil, err
	}
	defer finish()
	var f *ProjectFile
	resp, err := s.client.Do(req, &f)
	if err == nil && f == nil {
		err = &DecodeError{Method: req.Method, URL: wire.RedactURL(req.URL), Err: errUploadRejected}
	}
	return result(s.client, f, resp, err)
}

// ShareProjectOptions are the parameters of Share.
type ShareProjectOptions struct {
	GroupID     int         `url:"group_id"`
	GroupAccess AccessLevel `url:"group_access"`
}

// ProjectShare is the link Share creates.
type ProjectShare struct {
	ID          int         `json:"id"`
	ProjectID   int         `json:"project_id"`
	GroupID     int         `json:"group_id"`
	GroupAccess AccessLevel `json:"group_access"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Share gives a group access to a project. A nil opt, or a zero GroupID or
// GroupAccess, is an *ArgumentError.
//
// API: POST /projects/:id/share
func (s *ProjectsService) Share(ctx context.Context, pid any, opt *ShareProjectOptions) (*ProjectShare, *Response, error) {
	return doChecked[ProjectShare](ctx, s.client, http.MethodPost, route("projects/%s/share", pid), opt, "GroupID", "GroupAccess")
}

// ForkRelation is the link that marks a project as forked from another. ID
// is the link's own id, not a project's.
type ForkRelation struct {
	ID                  int   `json:"id"`
	ForkedToProjectID   int   `json:"forked_to_project_id"`
	ForkedFromProjectID int   `json:"forked_from_project_id"`
	CreatedAt           *Time `json:"created_at"`
	UpdatedAt           *Time `json:"updated_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CreateForkRelation marks a project as forked from another, and returns
// the link, not a project. A project that already has a source is
// ErrConflict. Administrators only.
//
// API: POST /projects/:id/fork/:forked_from_id
func (s *ProjectsService) CreateForkRelation(ctx context.Context, pid any, forkedFromID int) (*ForkRelation, *Response, error) {
	return do[ForkRelation](ctx, s.client, http.MethodPost, route("projects/%s/fork/%s", pid, forkedFromID), nil)
}

// DeleteForkRelation removes a project's forked-from relation. Administrators only.
//
// API: DELETE /projects/:id/fork
func (s *ProjectsService) DeleteForkRelation(ctx context.Context, pid any) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s/fork", pid), nil, nil)
}

// SearchProjectsOptions are the parameters of Search.
type SearchProjectsOptions struct {
	ListOptions
	OrderBy *ProjectOrderBy `url:"order_by,omitempty"` // id, name, created_at or last_activity_at
	Sort    *SortOrder      `url:"sort,omitempty"`     // ascending when nil
}

// Search returns one page of the accessible projects whose name contains
// query, sorted ascending unless opt says otherwise. An empty query is an
// *ArgumentError.
//
// API: GET /projects/search/:query
func (s *ProjectsService) Search(ctx context.Context, query string, opt *SearchProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, searchPath(query), opt)
}

// AllSearch iterates over the projects of every page of Search.
//
// API: GET /projects/search/:query
func (s *ProjectsService) AllSearch(ctx context.Context, query string, opt *SearchProjectsOptions, iopts ...IterOption) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, searchPath(query), opt, iopts)
}

// searchPath refuses an empty query by its own argument name.
func searchPath(query string) endpoint {
	if query == "" {
		return endpoint{err: errRequired("query")}
	}
	return route("projects/search/%s", query)
}
