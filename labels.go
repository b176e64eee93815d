package collab

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// LabelsService handles the label endpoints. Every method addresses a label
// by its name, the one identifier a label record carries.
type LabelsService struct{ client *Client }

// Label is a project label. Create and Update answers fill only Name,
// Color and Description; subscription answers add Subscribed.
type Label struct {
	Name                   string  `json:"name"`
	Color                  string  `json:"color"`
	Description            *string `json:"description"`
	OpenIssuesCount        int     `json:"open_issues_count"`
	ClosedIssuesCount      int     `json:"closed_issues_count"`
	OpenMergeRequestsCount int     `json:"open_merge_requests_count"`
	Subscribed             bool    `json:"subscribed"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// DeletedLabel is the different record Delete answers with.
type DeletedLabel struct {
	ID          int     `json:"id"`
	Title       string  `json:"title"`
	Color       string  `json:"color"`
	Description *string `json:"description"`
	Priority    *int    `json:"priority"` // nil when the label had none
	ProjectID   int     `json:"project_id"`
	Template    bool    `json:"template"`
	CreatedAt   *Time   `json:"created_at"`
	UpdatedAt   *Time   `json:"updated_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

var labelColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// checkColor reports a colour that is not # and six hex digits.
func checkColor(arg, color string) error {
	if !labelColor.MatchString(color) {
		return invalidArg(arg, "must be # and six hex digits, got %q", color)
	}
	return nil
}

// CreateLabelOptions are the parameters of Create. Name and Color (#RRGGBB) are required.
type CreateLabelOptions struct {
	Name        string  `url:"name"`
	Color       string  `url:"color"`
	Description *string `url:"description,omitempty"`
}

// UpdateLabelOptions are the parameters of Update; nil fields are unchanged.
// NewName or Color is required.
type UpdateLabelOptions struct {
	NewName     *string `url:"new_name,omitempty"`
	Color       *string `url:"color,omitempty"` // #RRGGBB
	Description *string `url:"description,omitempty"`
}

// labelName is the name parameter of Update and Delete.
type labelName struct {
	Name string `url:"name"`
}

// labelUpdate is the body of Update: the label's name, then the changes.
type labelUpdate struct {
	labelName
	*UpdateLabelOptions
}

// ListLabelsOptions are the parameters of Labels.List and All. It has no
// fields: this server version neither pages nor filters the labels. It is
// there so that a later version's parameters can be added without changing
// the methods.
type ListLabelsOptions struct{}

// List returns every label of a project: this server version sends them all
// in one answer. opt may be nil.
//
// API: GET /projects/:id/labels
func (s *LabelsService) List(ctx context.Context, pid any, opt *ListLabelsOptions) ([]*Label, *Response, error) {
	return doList[Label](ctx, s.client, http.MethodGet, route("projects/%s/labels", pid), opt)
}

// All iterates over the labels of List. This server version sends them in
// one answer, so it makes one request; a server that pages the list is
// followed page by page.
//
// API: GET /projects/:id/labels
func (s *LabelsService) All(ctx context.Context, pid any, opt *ListLabelsOptions, iopts ...IterOption) iter.Seq2[*Label, error] {
	return all[Label](ctx, s.client, route("projects/%s/labels", pid), opt, iopts)
}

// Create makes a label. A duplicate name is ErrConflict. A nil opt, an empty
// Name or a Color other than # and six hex digits is an *ArgumentError.
//
// API: POST /projects/:id/labels
func (s *LabelsService) Create(ctx context.Context, pid any, opt *CreateLabelOptions) (*Label, *Response, error) {
	if err := checkRequired(opt, "Name"); err != nil {
		return nil, nil, err
	}
	if err := checkColor("opt.Color", opt.Color); err != nil {
		return nil, nil, err
	}
	return do[Label](ctx, s.client, http.MethodPost, route("projects/%s/labels", pid), opt)
}

// Update renames, recolours or redescribes the label called name. An empty
// name, a nil opt, neither NewName nor Color, or a Color other than # and six
// hex digits is an *ArgumentError. A missing label is ErrNotFound.
//
// API: PUT /projects/:id/labels
func (s *LabelsService) Update(ctx context.Context, pid any, name string, opt *UpdateLabelOptions) (*Label, *Response, error) {
	switch {
	case name == "":
		return nil, nil, errRequired("name")
	case opt == nil:
		return nil, nil, errRequired("opt")
	case opt.NewName == nil && opt.Color == nil:
		return nil, nil, invalidArg("opt", "needs NewName or Color")
	case opt.Color != nil:
		if err := checkColor("opt.Color", *opt.Color); err != nil {
			return nil, nil, err
		}
	}
	return do[Label](ctx, s.client, http.MethodPut, route("projects/%s/labels", pid), &labelUpdate{labelName{name}, opt})
}

// Delete removes the label called name and returns it as DeletedLabel. An
// empty name is an *ArgumentError; a missing label is ErrNotFound.
//
// API: DELETE /projects/:id/labels
func (s *LabelsService) Delete(ctx context.Context, pid any, name string) (*DeletedLabel, *Response, error) {
	if name == "" {
		return nil, nil, errRequired("name")
	}
	return do[DeletedLabel](ctx, s.client, http.MethodDelete, route("projects/%s/labels", pid), &labelName{name})
}

// Subscribe subscribes the caller to the label called name; again is
// ErrNotModified. The name travels in the path, escaped into one segment. A
// name made only of digits may be read by the server as a label id.
//
// API: POST /projects/:id/labels/:label_id/subscription
func (s *LabelsService) Subscribe(ctx context.Context, pid any, name string) (*Label, *Response, error) {
	return s.subscription(ctx, http.MethodPost, pid, name)
}

// Unsubscribe reverses Subscribe for the label called name; again is
// ErrNotModified.
//
// API: DELETE /projects/:id/labels/:label_id/subscription
func (s *LabelsService) Unsubscribe(ctx context.Context, pid any, name string) (*Label, *Response, error) {
	return s.subscription(ctx, http.MethodDelete, pid, name)
}

func (s *LabelsService) subscription(ctx context.Context, method string, pid any, name string) (*Label, *Response, error) {
	if name == "" {
		return nil, nil, errRequired("name")
	}
	return do[Label](ctx, s.client, method, route("projects/%s/labels/%s/subscription", pid, name), nil)
}

// maxLabelReads bounds the reads of a label helper on an object whose
// labels keep changing.
const maxLabelReads = 5

// editLabels is AddLabels and RemoveLabels of issues and merge requests:
// it checks the names, then reads the object at p with GET and writes its
// labels back with PUT, as labelEdit.run does. change makes the change from
// the names; view says where the object keeps its labels and updated_at.
func editLabels[T any](ctx context.Context, c *Client, p endpoint, names []string, change func([]string) func([]string) []string, view func(*T) ([]string, *Time)) (*T, *Response, error) {
	if err := checkLabelNames(names); err != nil {
		return nil, nil, err
	}
	return labelEdit[T]{
		get: func() (*T, *Response, error) { return do[T](ctx, c, http.MethodGet, p, nil) },
		put: func(l LabelNames) (*T, *Response, error) {
			return do[T](ctx, c, http.MethodPut, p, &labelsForm{&l})
		},
		view: view,
	}.run(change(names))
}

// labelsForm is the body of the write: the labels alone, every other field
// unchanged. An empty list is sent as labels= and clears them.
type labelsForm struct {
	Labels *LabelNames `url:"labels,omitempty"`
}

// labelEdit is how editLabels reads the object, writes its labels, and
// finds its labels and updated_at.
type labelEdit[T any] struct {
	get  func() (*T, *Response, error)
	put  func(LabelNames) (*T, *Response, error)
	view func(*T) ([]string, *Time)
}

// run reads the object, applies change to its labels, and writes the result
// only once two reads in a row agree on the labels and updated_at, so that an
// edit made between the read and the merge is merged, not overwritten. It
// writes nothing when change leaves the labels as they are.
func (e labelEdit[T]) run(change func([]string) []string) (*T, *Response, error) {
	var prevLabels []string
	var prevAt *Time
	for i := range maxLabelReads {
		cur, resp, err := e.get()
		if err != nil {
			return nil, resp, err
		}
		labels, at := e.view(cur)
		want := change(labels)
		if slices.Equal(want, labels) {
			return cur, resp, nil
		}
		if i > 0 && slices.Equal(labels, prevLabels) && sameInstant(at, prevAt) {
			return e.put(LabelNames(want))
		}
		prevLabels, prevAt = labels, at
	}
	return nil, nil, fmt.Errorf("collab: labels kept changing across %d reads; nothing written: %w", maxLabelReads, ErrConflict)
}

func sameInstant(a, b *Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b.Time)
}

// checkLabelNames refuses what the comma-joined labels parameter cannot
// carry: an empty name, or one with a comma.
func checkLabelNames(names []string) error {
	if len(names) == 0 {
		return errRequired("labels")
	}
	for i, n := range names {
		if strings.TrimSpace(n) == "" || strings.Contains(n, ",") {
			return invalidArg(fmt.Sprintf("labels[%d]", i), "must be a non-empty name without commas, got %q", n)
		}
	}
	return nil
}

// addLabels returns a change that appends the names not there yet.
func addLabels(names []string) func([]string) []string {
	return func(have []string) []string {
		out := slices.Clone(have)
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	}
}

// removeLabels returns a change that drops the names.
func removeLabels(names []string) func([]string) []string {
	return func(have []string) []string {
		return slices.DeleteFunc(slices.Clone(have), func(l string) bool { return slices.Contains(names, l) })
	}
}
