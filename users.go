package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"slices"
	"sync"
)

// UserState is the state of a user account. A state this package does not
// name, from a later server, decodes as itself.
type UserState string

// The states of a user account.
const (
	UserActive      UserState = "active"
	UserBlocked     UserState = "blocked"
	UserLDAPBlocked UserState = "ldap_blocked"
)

// UsersService reads user accounts: the caller's own, and others'. A bot
// asks Current who it is, to tell its own events from other people's.
type UsersService struct{ client *Client }

// UserDetails is a user account record. Administrators, and every user
// looking at their own account through Current, get every field. Other callers get the
// fields of User from List, and from Get also those of UserProfile; the
// rest stay zero.
type UserDetails struct {
	User
	UserProfile
	LastSignInAt     *Time       `json:"last_sign_in_at"`
	CurrentSignInAt  *Time       `json:"current_sign_in_at"`
	ConfirmedAt      *Time       `json:"confirmed_at"`
	ThemeID          int         `json:"theme_id"`
	ColorSchemeID    int         `json:"color_scheme_id"`
	ProjectsLimit    int         `json:"projects_limit"`
	Identities       []*Identity `json:"identities"`
	CanCreateGroup   bool        `json:"can_create_group"`
	CanCreateProject bool        `json:"can_create_project"`
	TwoFactorEnabled bool        `json:"two_factor_enabled"`
	External         bool        `json:"external"`
	// PrivateToken is the account's private token, which Current answers
	// whatever credential asked; the other calls leave it empty. It never
	// prints itself; see Secret.
	PrivateToken Secret `json:"private_token"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// Identity is an account at an external sign-in provider linked to a user.
type Identity struct {
	Provider  string `json:"provider"`
	ExternUID string `json:"extern_uid"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// learnedSecrets holds the credentials the API handed to a client and its
// copies, so that error text redacts them as it does the client's own token.
type learnedSecrets struct {
	mu   sync.Mutex
	list []string
}

func (l *learnedSecrets) add(s string) {
	if l == nil || s == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !slices.Contains(l.list, s) {
		l.list = append(l.list, s)
	}
}

func (l *learnedSecrets) all() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

// ListUsersOptions filters List. Username matches exactly, and the answer is
// then one unpaginated list; Search matches the name, username or email.
type ListUsersOptions struct {
	ListOptions
	Username *string `url:"username,omitempty"`
	Search   *string `url:"search,omitempty"`
	// Active lists active users only. The server reads any value of the
	// parameter as true, so false is not sent at all.
	Active bool `url:"active,omitempty"`
}

// Current returns the caller's own account (the user Sudo acts as, if any).
// Its PrivateToken is redacted from everything the client prints from then
// on, as the client's own token is.
//
// API: GET /user
func (s *UsersService) Current(ctx context.Context) (*UserDetails, *Response, error) {
	var u *UserDetails
	resp, err := send(ctx, s.client, http.MethodGet, route("user"), nil, &u)
	if u != nil {
		s.client.learned.add(string(u.PrivateToken)) // even when the rest did not decode
	}
	return result(s.client, u, resp, err)
}

// List returns one page of users. Administrators get every field of each;
// others get the fields of User.
//
// API: GET /users
func (s *UsersService) List(ctx context.Context, opt *ListUsersOptions) ([]*UserDetails, *Response, error) {
	return doList[UserDetails](ctx, s.client, http.MethodGet, route("users"), opt)
}

// All iterates over the users of every page of List.
//
// API: GET /users
func (s *UsersService) All(ctx context.Context, opt *ListUsersOptions, iopts ...IterOption) iter.Seq2[*UserDetails, error] {
	return all[UserDetails](ctx, s.client, route("users"), opt, iopts)
}

// Get returns a user by numeric id. A user the caller may not see is
// ErrNotFound.
//
// API: GET /users/:id
func (s *UsersService) Get(ctx context.Context, id int) (*UserDetails, *Response, error) {
	return do[UserDetails](ctx, s.client, http.MethodGet, route("users/%s", id), nil)
}
