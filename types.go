package collab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Ptr returns a pointer to v, for optional option fields: Ptr("Crash on save").
func Ptr[T any](v T) *T { return &v }

// User is the brief user embedded as author, assignee, user or award user.
// Some merge request records carry Email and CreatedAt instead of AvatarURL
// and WebURL; both variants decode here.
type User struct {
	ID        int       `json:"id"`
	Name      string    `json:"name"`
	Username  string    `json:"username"`
	State     UserState `json:"state"`
	AvatarURL *string   `json:"avatar_url"` // nil when the server sends null
	WebURL    string    `json:"web_url"`
	Email     string    `json:"email"`
	CreatedAt *Time     `json:"created_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// UserProfile is the part of a user account that any caller may read
// beyond User: in a UserDetails from Get, and in a BuildUser.
type UserProfile struct {
	IsAdmin    bool    `json:"is_admin"`
	Bio        *string `json:"bio"`
	Location   *string `json:"location"`
	Skype      string  `json:"skype"`
	LinkedIn   string  `json:"linkedin"`
	Twitter    string  `json:"twitter"`
	WebsiteURL string  `json:"website_url"`
}

// BuildUser is the fuller user embedded in build records.
type BuildUser struct {
	User
	UserProfile

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Milestone is a project milestone, embedded in issues and merge requests.
type Milestone struct {
	ID          int            `json:"id"`
	IID         int            `json:"iid"`
	ProjectID   int            `json:"project_id"`
	Title       string         `json:"title"`
	Description *string        `json:"description"`
	State       MilestoneState `json:"state"`
	DueDate     *Time          `json:"due_date"`
	CreatedAt   *Time          `json:"created_at"`
	UpdatedAt   *Time          `json:"updated_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Time is a timestamp or a date as the server writes them: RFC 3339 and the
// other ISO 8601 forms, with or without fractional seconds, seconds, a zone
// or the "T"; database text such as "2016-06-21 09:14:07 UTC" and
// "2016-06-21 11:14:07 +0200"; and dates such as "2016-07-01". A value
// without a zone is UTC.
//
// A Time encodes as RFC 3339 with its offset, or as a date when DateOnly is
// set, so that decoding and encoding again keeps the instant or the date. The
// zero Time encodes as null. Decoding null leaves a Time as it was (a *Time
// field becomes nil), and "" decodes as the zero Time.
type Time struct {
	time.Time
	// DateOnly marks a calendar date without a time of day, held as
	// midnight UTC. Decoding sets it for values such as "2016-07-01".
	DateOnly bool
}

// timeLayouts are the layouts ParseTime hands to time.Parse for the rare
// forms its own parser leaves alone, such as a zone abbreviation other than
// UTC or a one-digit hour.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	time.DateOnly,
}

// ParseTime reads a timestamp or a date in any form Time decodes.
func ParseTime(s string) (Time, error) {
	if t, ok := parseISO(bytes.TrimSpace([]byte(s))); ok {
		return t, nil
	}
	return parseLayouts(s)
}

// parseLayouts tries each layout in turn. Each failure allocates an error,
// so it is the last resort.
func parseLayouts(s string) (Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			_, offset := t.Zone()
			return Time{Time: inOffset(t, offset), DateOnly: layout == time.DateOnly}, nil
		}
	}
	return Time{}, fmt.Errorf("collab: unrecognised time %q", s)
}

// parseISO reads, without allocating, the forms servers send:
// YYYY-MM-DD, optionally followed by "T" or a space, hh:mm, optionally :ss
// and a fraction (after "." or ","), and optionally a zone after an optional
// space: Z, UTC, ±hh, ±hhmm or ±hh:mm.
func parseISO(s []byte) (Time, bool) {
	if len(s) != 10 && len(s) < 16 {
		return Time{}, false
	}
	year, month, day, ok := parseDate(s)
	if !ok {
		return Time{}, false
	}
	if len(s) == 10 {
		return Time{Time: time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), DateOnly: true}, true
	}
	hour, minute := digits(s, 11, 2), digits(s, 14, 2)
	if s[10] != 'T' && s[10] != ' ' || hour < 0 || hour > 23 || s[13] != ':' || minute < 0 || minute > 59 {
		return Time{}, false
	}
	sec, nsec, rest, ok := parseSeconds(s[16:])
	if !ok {
		return Time{}, false
	}
	if len(rest) > 1 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return inZone(time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), rest)
}

// parseDate reads the yyyy-mm-dd at the start of s, a valid date.
func parseDate(s []byte) (year, month, day int, ok bool) {
	year, month, day = digits(s, 0, 4), digits(s, 5, 2), digits(s, 8, 2)
	ok = year >= 0 && s[4] == '-' && s[7] == '-' && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month, year)
	return year, month, day, ok
}

// parseSeconds reads the optional :ss and fraction after hh:mm, and returns
// what follows them.
func parseSeconds(rest []byte) (sec, nsec int, after []byte, ok bool) {
	if len(rest) == 0 || rest[0] != ':' {
		return 0, 0, rest, true
	}
	if sec = digits(rest, 1, 2); sec < 0 || sec > 59 {
		return 0, 0, nil, false
	}
	rest = rest[3:]
	if len(rest) > 1 && (rest[0] == '.' || rest[0] == ',') && isDigit(rest[1]) {
		rest = rest[1:]
		// Digits beyond nanoseconds are dropped, as time.Parse does.
		for scale := int(1e8); len(rest) > 0 && isDigit(rest[0]); rest = rest[1:] {
			nsec += int(rest[0]-'0') * scale
			scale /= 10
		}
	}
	return sec, nsec, rest, true
}

// inZone reads zone, which is empty, Z, UTC or an offset, for t, a wall
// clock read as UTC.
func inZone(t time.Time, zone []byte) (Time, bool) {
	switch string(zone) {
	case "", "Z", "UTC":
		return Time{Time: t}, true
	}
	offset, ok := parseOffset(zone)
	if !ok {
		return Time{}, false
	}
	return Time{Time: inOffset(t.Add(-time.Duration(offset)*time.Second), offset)}, true
}

// inOffset returns t in the one location every decoded time with this
// offset gets, whatever the machine's zone: UTC for a zero offset, and an
// unnamed fixed zone otherwise. Decoded values then compare equal to each
// other and to values built with time.UTC, and survive a round trip.
func inOffset(t time.Time, offset int) time.Time {
	if offset == 0 {
		return t.UTC()
	}
	return t.In(fixedZone(offset))
}

// parseOffset reads ±hh, ±hhmm or ±hh:mm into seconds east of UTC.
func parseOffset(s []byte) (int, bool) {
	if len(s) < 3 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	hh, mm := digits(s, 1, 2), 0
	switch {
	case len(s) == 5:
		mm = digits(s, 3, 2)
	case len(s) == 6 && s[3] == ':':
		mm = digits(s, 4, 2)
	case len(s) != 3:
		return 0, false
	}
	if hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, false
	}
	offset := hh*3600 + mm*60
	if s[0] == '-' {
		offset = -offset
	}
	return offset, true
}

// digits reads the n-digit number at s[i:], or returns -1.
func digits(s []byte, i, n int) int {
	if len(s) < i+n {
		return -1
	}
	v := 0
	for _, c := range s[i : i+n] {
		if !isDigit(c) {
			return -1
		}
		v = v*10 + int(c-'0')
	}
	return v
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(month, year int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return monthDays[month]
}

// zones holds one shared location per quarter-hour offset from -24 h to
// +24 h, so that decoding a zoned time allocates no new location.
var zones [8*24 + 1]atomic.Pointer[time.Location]

func fixedZone(offset int) *time.Location {
	if offset%900 != 0 || offset < -24*3600 || offset > 24*3600 {
		return time.FixedZone("", offset)
	}
	z := &zones[offset/900+4*24]
	loc := z.Load()
	if loc == nil {
		loc = time.FixedZone("", offset) // two racing callers store equal zones
		z.Store(loc)
	}
	return loc
}

// UnmarshalJSON accepts a string in any form ParseTime reads, or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	// The usual case: a string without escapes, read in place.
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b[1:len(b)-1], '\\') < 0 {
		s := b[1 : len(b)-1]
		if len(s) == 0 {
			*t = Time{}
			return nil
		}
		if v, ok := parseISO(bytes.TrimSpace(s)); ok {
			*t = v
			return nil
		}
	}
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

// MarshalJSON writes RFC 3339 with the value's offset and as many fractional
// digits as it needs, or YYYY-MM-DD when DateOnly is set, or null for the
// zero Time. An offset RFC 3339 cannot write (24 hours or more, or with
// seconds) is written as UTC, which keeps the instant.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	tm, layout := t.Time, time.RFC3339Nano
	if t.DateOnly {
		layout = time.DateOnly
	} else if _, offset := tm.Zone(); offset%60 != 0 || offset <= -24*3600 || offset >= 24*3600 {
		tm = tm.UTC()
	}
	if y := tm.Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("collab: cannot encode year %d: RFC 3339 has four-digit years", y)
	}
	b := make([]byte, 0, len(layout)+2)
	b = append(b, '"')
	b = tm.AppendFormat(b, layout)
	return append(b, '"'), nil
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
	return levelName(a, "AccessLevel", "none", "guest", "reporter", "developer", "master", "owner")
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
	return levelName(v, "VisibilityLevel", "private", "internal", "public")
}

// levelName names a level of the API's scale, where levels go up in steps
// of ten from 0: names[0] for 0, names[1] for 10, and so on. Any other value
// reads as typ(n).
func levelName[L ~int](l L, typ string, names ...string) string {
	if i := int(l) / 10; l >= 0 && l%10 == 0 && i < len(names) {
		return names[i]
	}
	return typ + "(" + strconv.Itoa(int(l)) + ")"
}

// EncodeValues sends the level as its number, not its name.
func (a AccessLevel) EncodeValues(key string, v *url.Values) error { return encodeLevel(key, a, v) }

// EncodeValues sends the level as its number, not its name.
func (v VisibilityLevel) EncodeValues(key string, vals *url.Values) error {
	return encodeLevel(key, v, vals)
}

// encodeLevel sets key to the number of a level.
func encodeLevel[L ~int](key string, l L, v *url.Values) error {
	v.Set(key, strconv.Itoa(int(l)))
	return nil
}

// LabelNames is a list of label names, sent joined with commas as the API
// asks. In update options a non-nil pointer to an empty LabelNames clears
// them. (A Label is the record the Labels service manages.)
type LabelNames []string

// EncodeValues joins the names with commas.
func (l LabelNames) EncodeValues(key string, v *url.Values) error {
	v.Set(key, strings.Join(l, ","))
	return nil
}

// IssueState is the state of an issue, in records and webhook events, and
// the filter of issue lists. A state this package does not name, from a
// later server, decodes as itself.
type IssueState string

// The states of an issue. Lists filter on IssueOpened or IssueClosed (a
// reopened issue is listed as opened); a nil State lists both.
const (
	IssueOpened   IssueState = "opened"
	IssueReopened IssueState = "reopened"
	IssueClosed   IssueState = "closed"
)

// IssueStateEvent closes or reopens an issue through UpdateIssueOptions.
type IssueStateEvent string

// The state events of an issue update.
const (
	IssueClose  IssueStateEvent = "close"
	IssueReopen IssueStateEvent = "reopen"
)

// MergeRequestState is the state of a merge request, in records and
// webhook events, and the filter of merge request lists. A state this
// package does not name, from a later server, decodes as itself.
type MergeRequestState string

// The states of a merge request. Lists filter on opened, closed, merged or
// MergeRequestAll, which is only a filter.
const (
	MergeRequestOpened   MergeRequestState = "opened"
	MergeRequestReopened MergeRequestState = "reopened"
	MergeRequestClosed   MergeRequestState = "closed"
	MergeRequestMerged   MergeRequestState = "merged"
	MergeRequestLocked   MergeRequestState = "locked"
	MergeRequestAll      MergeRequestState = "all"
)

// MergeStatus says whether a merge request can be merged, as the server last
// checked.
type MergeStatus string

// The merge statuses of a merge request.
const (
	MergeStatusUnchecked      MergeStatus = "unchecked"
	MergeStatusCanBeMerged    MergeStatus = "can_be_merged"
	MergeStatusCannotBeMerged MergeStatus = "cannot_be_merged"
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

// MilestoneState is the state of a milestone, in records, and the filter of
// milestone lists. A state this package does not name decodes as itself.
type MilestoneState string

// The states of a milestone; a nil State in list options lists both.
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
