package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
)

// HooksService handles the project hook endpoints.
type HooksService struct{ client *Client }

// ProjectHook is a project webhook.
type ProjectHook struct {
	ID                    int    `json:"id"`
	ProjectID             int    `json:"project_id"`
	URL                   string `json:"url"`
	PushEvents            bool   `json:"push_events"`
	IssuesEvents          bool   `json:"issues_events"`
	MergeRequestsEvents   bool   `json:"merge_requests_events"`
	TagPushEvents         bool   `json:"tag_push_events"`
	NoteEvents            bool   `json:"note_events"`
	BuildEvents           bool   `json:"build_events"`
	EnableSSLVerification bool   `json:"enable_ssl_verification"`
	CreatedAt             *Time  `json:"created_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// AddHookOptions are the parameters of Add. URL is required.
type AddHookOptions struct {
	URL                   string `url:"url"`
	PushEvents            *bool  `url:"push_events,omitempty"`
	IssuesEvents          *bool  `url:"issues_events,omitempty"`
	MergeRequestsEvents   *bool  `url:"merge_requests_events,omitempty"`
	TagPushEvents         *bool  `url:"tag_push_events,omitempty"`
	NoteEvents            *bool  `url:"note_events,omitempty"`
	BuildEvents           *bool  `url:"build_events,omitempty"`
	EnableSSLVerification *bool  `url:"enable_ssl_verification,omitempty"`
}

// UpdateHookOptions are the parameters of Update: the same as Add's, URL
// included, which the server needs again even when it does not change.
type UpdateHookOptions = AddHookOptions

// List returns a project's hooks.
// The list is paginated: List returns one page, All reads every page.
//
// API: GET /projects/:id/hooks
func (s *HooksService) List(ctx context.Context, pid any, opt *ListOptions) ([]*ProjectHook, *Response, error) {
	return doList[ProjectHook](ctx, s.client, http.MethodGet, route("projects/%s/hooks", pid), opt)
}

// All iterates over the hooks of every page of List.
//
// API: GET /projects/:id/hooks
func (s *HooksService) All(ctx context.Context, pid any, opt *ListOptions, iopts ...IterOption) iter.Seq2[*ProjectHook, error] {
	return all[ProjectHook](ctx, s.client, route("projects/%s/hooks", pid), opt, iopts)
}

// Get returns one hook.
//
// API: GET /projects/:id/hooks/:hook_id
func (s *HooksService) Get(ctx context.Context, pid any, hookID int) (*ProjectHook, *Response, error) {
	return do[ProjectHook](ctx, s.client, http.MethodGet, route("projects/%s/hooks/%s", pid, hookID), nil)
}

// Add creates a hook. A nil opt or an empty URL is an *ArgumentError.
//
// API: POST /projects/:id/hooks
func (s *HooksService) Add(ctx context.Context, pid any, opt *AddHookOptions) (*ProjectHook, *Response, error) {
	return doChecked[ProjectHook](ctx, s.client, http.MethodPost, route("projects/%s/hooks", pid), opt, "URL")
}

// Update changes a hook. The server needs the URL again even when it does
// not change: a nil opt or an empty URL is an *ArgumentError.
//
// API: PUT /projects/:id/hooks/:hook_id
func (s *HooksService) Update(ctx context.Context, pid any, hookID int, opt *UpdateHookOptions) (*ProjectHook, *Response, error) {
	return doChecked[ProjectHook](ctx, s.client, http.MethodPut, route("projects/%s/hooks/%s", pid, hookID), opt, "URL")
}

// Delete removes a hook. Deleting a hook that is already gone is ErrNotFound
// on deployed servers, though the API documentation calls the call
// idempotent: callers who only want it gone may treat ErrNotFound as success.
//
// API: DELETE /projects/:id/hooks/:hook_id
func (s *HooksService) Delete(ctx context.Context, pid any, hookID int) (*Response, error) {
	return send(ctx, s.client, http.MethodDelete, route("projects/%s/hooks/%s", pid, hookID), nil, nil)
}
