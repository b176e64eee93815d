package collab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Ptr returns a pointer to v, for optional option fields: Ptr("opened").
func Ptr[T any](v T) *T { return &v }

// User is the brief user embedded as author, assignee, user or award user.
// Some merge request records carry Email and CreatedAt instead of AvatarURL
// and WebURL; both variants decode here.
type User struct {
	ID        int     `json:"id"`
	Name      string  `json:"name"`
	Username  string  `json:"username"`
	State     string  `json:"state"`
	AvatarURL *string `json:"avatar_url"` // nil when the server sends null
	WebURL    string  `json:"web_url"`
	Email     string  `json:"email"`
	CreatedAt *Time   `json:"created_at"`
}

// BuildUser is the fuller user embedded in build records.
type BuildUser struct {
	User
	Bio        *string `json:"bio"`
	Location   *string `json:"location"`
	IsAdmin    bool    `json:"is_admin"`
	LinkedIn   string  `json:"linkedin"`
	Skype      string  `json:"skype"`
	Twitter    string  `json:"twitter"`
	WebsiteURL string  `json:"website_url"`
}

// Milestone is a project milestone, embedded in issues and merge requests.
type Milestone struct {
	ID          int     `json:"id"`
	IID         int     `json:"iid"`
	ProjectID   int     `json:"project_id"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	State       string  `json:"state"`
	DueDate     *Time   `json:"due_date"`
	CreatedAt   *Time   `json:"created_at"`
	UpdatedAt   *Time   `json:"updated_at"`
}

// Time is a timestamp that decodes every ISO 8601 form the server sends:
// with or without fractional seconds or a zone, and date-only values.
// It encodes as RFC 3339.
type Time struct{ time.Time }

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
}

// ParseTime reads an ISO 8601 timestamp or date in any form Time accepts.
func ParseTime(s string) (Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return Time{t}, nil
		}
	}
	return Time{}, fmt.Errorf("collab: unrecognised time %q", s)
}

// UnmarshalJSON accepts a string in any form ParseTime reads, or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("collab: time must be a string, got %s", truncate(b))
	}
	if s == "" {
		*t = Time{}
		return nil
	}
	parsed, err := ParseTime(s)
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}

// MarshalJSON writes RFC 3339 with fractional seconds as needed.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(strconv.Quote(t.Format(time.RFC3339Nano))), nil
}

// FlexBool is a bool the server may send as true or as "true" (also 1, "1",
// "t", "on", any case). null is false.
type FlexBool bool

// UnmarshalJSON accepts JSON booleans, numbers and strings.
func (b *FlexBool) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		*b = false
		return nil
	}
	s := string(data)
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "t", "on", "yes":
		*b = true
	case "false", "0", "f", "off", "no", "":
		*b = false
	default:
		return fmt.Errorf("collab: not a boolean: %s", truncate(data))
	}
	return nil
}

// FlexInt is an int the server may send as 2 or as "2". null and "" are 0.
type FlexInt int

// UnmarshalJSON accepts JSON numbers and numeric strings.
func (n *FlexInt) UnmarshalJSON(data []byte) error {
	if isNull(data) {
		*n = 0
		return nil
	}
	s := string(data)
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	if s == "" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("collab: not an integer: %s", truncate(data))
	}
	*n = FlexInt(v)
	return nil
}

func isNull(b []byte) bool { return bytes.Equal(bytes.TrimSpace(b), []byte("null")) }

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// AccessLevel is a member's role in a project or group.
type AccessLevel int

// The access levels the API knows.
const (
	NoAccess        AccessLevel = 0
	GuestAccess     AccessLevel = 10
	ReporterAccess  AccessLevel = 20
	DeveloperAccess AccessLevel = 30
	MasterAccess    AccessLevel = 40
	OwnerAccess     AccessLevel = 50
)

func (a AccessLevel) String() string {
	switch a {
	case NoAccess:
		return "none"
	case GuestAccess:
		return "guest"
	case ReporterAccess:
		return "reporter"
	case DeveloperAccess:
		return "developer"
	case MasterAccess:
		return "master"
	case OwnerAccess:
		return "owner"
	}
	return "AccessLevel(" + strconv.Itoa(int(a)) + ")"
}

// VisibilityLevel says who may see a project or group.
type VisibilityLevel int

// The visibility levels the API knows.
const (
	PrivateVisibility  VisibilityLevel = 0
	InternalVisibility VisibilityLevel = 10
	PublicVisibility   VisibilityLevel = 20
)

func (v VisibilityLevel) String() string {
	switch v {
	case PrivateVisibility:
		return "private"
	case InternalVisibility:
		return "internal"
	case PublicVisibility:
		return "public"
	}
	return "VisibilityLevel(" + strconv.Itoa(int(v)) + ")"
}

// EncodeValues sends the level as its number, not its name.
func (a AccessLevel) EncodeValues(key string, v *url.Values) error {
	v.Set(key, strconv.Itoa(int(a)))
	return nil
}

// EncodeValues sends the level as its number, not its name.
func (v VisibilityLevel) EncodeValues(key string, vals *url.Values) error {
	vals.Set(key, strconv.Itoa(int(v)))
	return nil
}

// Labels is a list of label names, sent joined with commas as the API
// asks. In update options a non-nil pointer to an empty Labels clears them.
type Labels []string

// EncodeValues joins the names with commas.
func (l Labels) EncodeValues(key string, v *url.Values) error {
	v.Set(key, strings.Join(l, ","))
	return nil
}

// IssueState filters issue lists by state.
type IssueState string

// The states an issue list filters on; a nil State lists both.
const (
	IssueOpened IssueState = "opened"
	IssueClosed IssueState = "closed"
)

// IssueStateEvent closes or reopens an issue through UpdateIssueOptions.
type IssueStateEvent string

// The state events of an issue update.
const (
	IssueClose  IssueStateEvent = "close"
	IssueReopen IssueStateEvent = "reopen"
)

// MergeRequestState filters merge request lists by state.
type MergeRequestState string

// The states a merge request list filters on.
const (
	MergeRequestOpened MergeRequestState = "opened"
	MergeRequestClosed MergeRequestState = "closed"
	MergeRequestMerged MergeRequestState = "merged"
	MergeRequestAll    MergeRequestState = "all"
)

// MergeRequestStateEvent closes, reopens or merges a merge request through
// UpdateMergeRequestOptions.
type MergeRequestStateEvent string

// The state events of a merge request update.
const (
	MergeRequestClose  MergeRequestStateEvent = "close"
	MergeRequestReopen MergeRequestStateEvent = "reopen"
	MergeRequestMerge  MergeRequestStateEvent = "merge"
)

// MilestoneState filters milestone lists by state.
type MilestoneState string

// The states a milestone list filters on; a nil State lists both.
const (
	MilestoneActive MilestoneState = "active"
	MilestoneClosed MilestoneState = "closed"
)

// MilestoneStateEvent closes or reactivates a milestone through
// UpdateMilestoneOptions.
type MilestoneStateEvent string

// The state events of a milestone update.
const (
	MilestoneClose    MilestoneStateEvent = "close"
	MilestoneActivate MilestoneStateEvent = "activate"
)

// OrderBy is the sort key of the issue and merge request lists.
type OrderBy string

// The sort keys of the issue and merge request lists; created_at when nil.
const (
	OrderByCreatedAt OrderBy = "created_at"
	OrderByUpdatedAt OrderBy = "updated_at"
)

// ProjectOrderBy is the sort key of the project lists.
type ProjectOrderBy string

// The sort keys of the project lists; created_at when nil. Projects.Search
// accepts ID, Name, CreatedAt and LastActivityAt only.
const (
	ProjectOrderByID             ProjectOrderBy = "id"
	ProjectOrderByName           ProjectOrderBy = "name"
	ProjectOrderByPath           ProjectOrderBy = "path"
	ProjectOrderByCreatedAt      ProjectOrderBy = "created_at"
	ProjectOrderByUpdatedAt      ProjectOrderBy = "updated_at"
	ProjectOrderByLastActivityAt ProjectOrderBy = "last_activity_at"
)

// SortOrder is the direction of a sorted list.
type SortOrder string

// The sort directions. Lists sort descending when Sort is nil, except
// Projects.Search, which sorts ascending.
const (
	SortAsc  SortOrder = "asc"
	SortDesc SortOrder = "desc"
)
