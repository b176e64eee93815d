package collab

import (
	"context"
	"io"
	"iter"
	"net/http"
)

// ProjectsService handles the project endpoints of the contract.
type ProjectsService struct{ client *Client }

// Project is a project record. Group-embedded projects leave some fields out.
type Project struct {
	ID                       int                `json:"id"`
	Name                     string             `json:"name"`
	Path                     string             `json:"path"`
	NameWithNamespace        string             `json:"name_with_namespace"`
	PathWithNamespace        string             `json:"path_with_namespace"`
	Description              string             `json:"description"`
	DefaultBranch            string             `json:"default_branch"`
	Public                   bool               `json:"public"`
	VisibilityLevel          VisibilityLevel    `json:"visibility_level"`
	SSHURLToRepo             string             `json:"ssh_url_to_repo"`
	HTTPURLToRepo            string             `json:"http_url_to_repo"`
	WebURL                   string             `json:"web_url"`
	TagList                  []string           `json:"tag_list"`
	Owner                    *ProjectOwner      `json:"owner"`
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
	AvatarURL                string             `json:"avatar_url"`
	RunnersToken             string             `json:"runners_token,omitempty"`
	ForkedFromProject        *ForkedFromProject `json:"forked_from_project,omitempty"`
	SharedWithGroups         []*SharedGroup     `json:"shared_with_groups,omitempty"`
}

// ProjectOwner is the owner embedded in a project. Group projects have none.
type ProjectOwner struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	CreatedAt *Time  `json:"created_at"`
}

// ProjectNamespace is the namespace embedded in a project. Group-embedded
// projects add Avatar, ShareWithGroupLock and VisibilityLevel.
type ProjectNamespace struct {
	ID                 int              `json:"id"`
	Name               string           `json:"name"`
	Path               string           `json:"path"`
	Description        string           `json:"description"`
	OwnerID            int              `json:"owner_id"`
	CreatedAt          *Time            `json:"created_at"`
	UpdatedAt          *Time            `json:"updated_at"`
	Avatar             *NamespaceAvatar `json:"avatar,omitempty"`
	ShareWithGroupLock bool             `json:"share_with_group_lock,omitempty"`
	VisibilityLevel    VisibilityLevel  `json:"visibility_level,omitempty"`
}

// NamespaceAvatar is a group namespace's avatar.
type NamespaceAvatar struct {
	URL string `json:"url"`
}

// Permissions is the caller's access to a project, directly and through its group.
type Permissions struct {
	ProjectAccess *AccessInfo `json:"project_access"`
	GroupAccess   *AccessInfo `json:"group_access"`
}

// AccessInfo is one access grant in Permissions.
type AccessInfo struct {
	AccessLevel       AccessLevel `json:"access_level"`
	NotificationLevel int         `json:"notification_level"`
}

// ForkedFromProject is the brief source project of a fork.
type ForkedFromProject struct {
	ID                int    `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// SharedGroup is a group a project is shared with.
type SharedGroup struct {
	GroupID          int         `json:"group_id"`
	GroupName        string      `json:"group_name"`
	GroupAccessLevel AccessLevel `json:"group_access_level"`
}

// ListProjectsOptions filters the project lists.
type ListProjectsOptions struct {
	ListOptions
	Archived   *bool   `url:"archived,omitempty"`
	Visibility *string `url:"visibility,omitempty"` // public, internal or private
	OrderBy    *string `url:"order_by,omitempty"`   // id, name, path, created_at, updated_at, last_activity_at
	Sort       *string `url:"sort,omitempty"`       // asc or desc
	Search     *string `url:"search,omitempty"`
}

// List returns the projects the caller can access.
//
// API: GET /projects
func (s *ProjectsService) List(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects"), opt)
}

// All iterates over every project List returns.
//
// API: GET /projects
func (s *ProjectsService) All(ctx context.Context, opt *ListProjectsOptions) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects"), opt)
}

// ListOwned returns the projects the caller owns.
//
// API: GET /projects/owned
func (s *ProjectsService) ListOwned(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/owned"), opt)
}

// AllOwned iterates over every project ListOwned returns.
//
// API: GET /projects/owned
func (s *ProjectsService) AllOwned(ctx context.Context, opt *ListProjectsOptions) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/owned"), opt)
}

// ListStarred returns the projects the caller starred.
//
// API: GET /projects/starred
func (s *ProjectsService) ListStarred(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/starred"), opt)
}

// AllStarred iterates over every project ListStarred returns.
//
// API: GET /projects/starred
func (s *ProjectsService) AllStarred(ctx context.Context, opt *ListProjectsOptions) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/starred"), opt)
}

// ListAll returns every project of the instance. Administrators only.
//
// API: GET /projects/all
func (s *ProjectsService) ListAll(ctx context.Context, opt *ListProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/all"), opt)
}

// AllInstance iterates over every project ListAll returns.
//
// API: GET /projects/all
func (s *ProjectsService) AllInstance(ctx context.Context, opt *ListProjectsOptions) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/all"), opt)
}

// Get returns one project, by id or "namespace/name".
//
// API: GET /projects/:id
func (s *ProjectsService) Get(ctx context.Context, pid any) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodGet, route("projects/%s", pid), nil)
}

// ProjectEvent is one entry of a project's activity.
type ProjectEvent struct {
	Title          *string    `json:"title"`
	ProjectID      int        `json:"project_id"`
	ActionName     string     `json:"action_name"`
	TargetID       *int       `json:"target_id"`
	TargetType     *string    `json:"target_type"`
	TargetTitle    *string    `json:"target_title"`
	AuthorID       int        `json:"author_id"`
	Author         *User      `json:"author"`
	AuthorUsername string     `json:"author_username"`
	CreatedAt      *Time      `json:"created_at"`
	Data           *PushData  `json:"data"`
	Note           *EventNote `json:"note"`
}

// EventPerson is a commit author.
type EventPerson struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// EventNote is the comment embedded in a "commented on" event.
type EventNote struct {
	ID           int      `json:"id"`
	Body         string   `json:"body"`
	Attachment   *string  `json:"attachment"`
	Author       *User    `json:"author"`
	CreatedAt    *Time    `json:"created_at"`
	System       bool     `json:"system"`
	Upvote       FlexBool `json:"upvote"`
	Downvote     FlexBool `json:"downvote"`
	NoteableID   int      `json:"noteable_id"`
	NoteableType string   `json:"noteable_type"`
}

// ListEvents returns a project's activity, newest first.
//
// API: GET /projects/:id/events
func (s *ProjectsService) ListEvents(ctx context.Context, pid any, opt *ListOptions) ([]*ProjectEvent, *Response, error) {
	return doList[ProjectEvent](ctx, s.client, http.MethodGet, route("projects/%s/events", pid), opt)
}

// AllEvents iterates over every event ListEvents returns.
//
// API: GET /projects/:id/events
func (s *ProjectsService) AllEvents(ctx context.Context, pid any, opt *ListOptions) iter.Seq2[*ProjectEvent, error] {
	return all[ProjectEvent](ctx, s.client, route("projects/%s/events", pid), opt)
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
}

// Create makes a project owned by the caller. Name is required.
//
// API: POST /projects
func (s *ProjectsService) Create(ctx context.Context, opt *CreateProjectOptions) (*Project, *Response, error) {
	if opt == nil || opt.Name == "" {
		return nil, nil, errRequired("name")
	}
	return do[Project](ctx, s.client, http.MethodPost, route("projects"), opt)
}

// CreateForUser makes a project owned by another user. Administrators only.
//
// API: POST /projects/user/:user_id
func (s *ProjectsService) CreateForUser(ctx context.Context, userID int, opt *CreateProjectOptions) (*Project, *Response, error) {
	if opt == nil || opt.Name == "" {
		return nil, nil, errRequired("name")
	}
	return do[Project](ctx, s.client, http.MethodPost, route("projects/user/%s", userID), opt)
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
}

// UploadFile streams r to the project as multipart field "file" without
// holding it in memory. A plain reader is sent once and never retried. The
// server answers null for a missing or oversized file; that is an error.
//
// API: POST /projects/:id/uploads
func (s *ProjectsService) UploadFile(ctx context.Context, pid any, r io.Reader, filename string) (*ProjectFile, *Response, error) {
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
		err = &DecodeError{Method: req.Method, URL: redactURL(req.URL), Err: errUploadRejected}
	}
	if err != nil {
		return nil, resp, err
	}
	return f, resp, nil
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
}

// Share gives a group access to a project.
//
// API: POST /projects/:id/share
func (s *ProjectsService) Share(ctx context.Context, pid any, opt *ShareProjectOptions) (*ProjectShare, *Response, error) {
	if opt == nil || opt.GroupID == 0 || opt.GroupAccess == 0 {
		return nil, nil, errRequired("group_id and group_access")
	}
	return do[ProjectShare](ctx, s.client, http.MethodPost, route("projects/%s/share", pid), opt)
}

// CreateForkRelation marks a project as forked from another. Administrators only.
//
// API: POST /projects/:id/fork/:forked_from_id
func (s *ProjectsService) CreateForkRelation(ctx context.Context, pid any, forkedFromID int) (*Project, *Response, error) {
	return do[Project](ctx, s.client, http.MethodPost, route("projects/%s/fork/%s", pid, forkedFromID), nil)
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
	OrderBy *string `url:"order_by,omitempty"` // id, name, created_at, last_activity_at
	Sort    *string `url:"sort,omitempty"`     // asc (the default) or desc
}

// Search returns the accessible projects whose name contains query.
//
// API: GET /projects/search/:query
func (s *ProjectsService) Search(ctx context.Context, query string, opt *SearchProjectsOptions) ([]*Project, *Response, error) {
	return doList[Project](ctx, s.client, http.MethodGet, route("projects/search/%s", query), opt)
}

// AllSearch iterates over every project Search returns.
//
// API: GET /projects/search/:query
func (s *ProjectsService) AllSearch(ctx context.Context, query string, opt *SearchProjectsOptions) iter.Seq2[*Project, error] {
	return all[Project](ctx, s.client, route("projects/search/%s", query), opt)
}
