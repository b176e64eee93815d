package collab

// UserState is the state of a user account. A state this package does not
// name, from a later server, decodes as itself.
type UserState string

// The states of a user account.
const (
	UserActive      UserState = "active"
	UserBlocked     UserState = "blocked"
	UserLDAPBlocked UserState = "ldap_blocked"
)
