package collabtest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

func (s *Server) userRoutes() {
	s.api("GET /user", rule{}, s.getCurrentUser)
	s.api("GET /users", rule{}, s.listUsers)
	s.api("GET /users/{user_id}", rule{}, s.getUser)
}

// account renders the full user record, which administrators see
// everywhere and every user sees of themselves.
func (s *Server) account(u *user) any {
	return reply(u.accountRecord(s.URL), "private_token")
}

// privateToken is the user's first private token, as GET /user answers it
// whatever credential asked.
func (s *Server) privateToken(userID int) any {
	toks := slices.Sorted(maps.Keys(s.tokens))
	for _, tok := range toks {
		if t := s.tokens[tok]; t.userID == userID && t.kind == PrivateToken {
			return tok
		}
	}
	return nil
}

func (s *Server) getCurrentUser(c *call) error {
	return c.json(http.StatusOK, answer{rec: c.user.accountRecord(s.URL),
		clear: map[string]any{"private_token": s.privateToken(c.user.id)}})
}

// listUsers filters by exact username (then the answer is one unpaginated
// array), by search in name, username and email, and by active (any value).
func (s *Server) listUsers(c *call) error {
	var out []*user
	username, search := c.str("username"), strings.ToLower(c.str("search"))
	for _, id := range slices.Sorted(maps.Keys(s.users)) {
		u := s.users[id]
		switch {
		case c.has("username") && !strings.EqualFold(u.username, username),
			c.has("active") && u.state != "active",
			search != "" && !strings.Contains(strings.ToLower(u.name+"\n"+u.username+"\n"+u.email), search):
			continue
		}
		out = append(out, u)
	}
	render := func(u *user) any {
		if c.user.admin {
			return s.account(u)
		}
		return reply(u.record(s.URL), briefUserOmit...)
	}
	if c.has("username") {
		list := make([]any, 0, len(out))
		for _, u := range out {
			list = append(list, render(u))
		}
		return c.json(http.StatusOK, list)
	}
	return page(c, out, render)
}

// getUser answers numeric ids only, as deployed servers route them.
func (s *Server) getUser(c *call) error {
	key := c.r.PathValue("user_id")
	if !isDigits(key) {
		return errStatus(http.StatusNotFound, "404 Not Found")
	}
	u := s.users[atoi(key)]
	if u == nil || (u.state != "active" && !c.user.admin && u.id != c.user.id) {
		return errStatus(http.StatusNotFound, "User not found.")
	}
	if c.user.admin {
		return c.json(http.StatusOK, s.account(u))
	}
	return c.json(http.StatusOK, reply(u.profileRecord(s.URL), "email"))
}

// BlockUser sets a user's state to blocked: active filters leave them out,
// and only administrators and the user see them by id. An unknown user is a
// mistake (see Err).
func (s *Server) BlockUser(userID int) {
	seedChange(s, "BlockUser", "user", s.users, userID, func(u *user) { u.state = "blocked" })
}
