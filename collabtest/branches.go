package collabtest

import (
	"net/http"
	"strings"
	"time"
)

type branch struct {
	name                     string
	commitID, parentID, tree string
	message                  string
	authorName, authorEmail  string
	committedAt              time.Time
	protected                bool
}

// addBranch creates or moves a branch to commit (a fresh id when "").
func (s *Server) addBranch(p *project, name, commit string) *branch {
	if commit == "" {
		commit = randomHex(20)
	}
	b := &branch{name: name, commitID: commit, tree: randomHex(20), message: "Update " + name,
		authorName: "Administrator", authorEmail: "admin@example.com", committedAt: s.now()}
	if old := p.branches[name]; old != nil {
		b.parentID, b.protected = old.commitID, old.protected
	}
	p.branches[name] = b
	return b
}

// Branch names may contain slashes, escaped as %2F or not: the branch is
// the rest of the path ({branch...}), and a PUT's rest ends in /protect or
// /unprotect.
func (s *Server) branchRoutes() {
	s.api("GET /projects/{id}/repository/branches", rule{}, s.listBranches)
	s.api("GET /projects/{id}/repository/branches/{branch...}", rule{}, s.getBranch)
	s.api("PUT /projects/{id}/repository/branches/{branch...}", rule{level: levelMaster}, s.protectBranch)
}

// isProtected: explicitly protected, or the default branch while the
// settings' default_branch_protection is 1 or 2 and nobody unprotected it.
func (s *Server) isProtected(p *project, b *branch) bool {
	if b.protected {
		return true
	}
	return b.name == p.defaultBranch && !p.defaultUnprotected && s.settings.intValue("default_branch_protection") > 0
}

func (s *Server) branchJSON(p *project, b *branch) any {
	parents := []any{}
	if b.parentID != "" {
		parents = append(parents, map[string]any{"id": b.parentID})
	}
	person := map[string]any{"name": b.authorName, "email": b.authorEmail}
	return map[string]any{
		"name": b.name, "protected": s.isProtected(p, b),
		"commit": map[string]any{
			"id": b.commitID, "parents": parents, "tree": b.tree, "message": b.message,
			"author": person, "committer": person, "authored_date": ts(b.committedAt), "committed_date": ts(b.committedAt),
		},
	}
}

func (s *Server) listBranches(c *call) error {
	p := c.project
	var out []*branch
	for _, b := range p.branches {
		out = append(out, b)
	}
	sortItems(c, out, "asc", func(b *branch) string { return b.name }, func(*branch) int { return 0 })
	return all(c, out, func(b *branch) any { return s.branchJSON(p, b) })
}

// findBranch resolves a branch name of the loaded project: "404 Branch Not Found".
func (c *call) findBranch(name string) (*branch, error) {
	b := c.project.branches[name]
	if b == nil {
		return nil, errNotFound("Branch")
	}
	return b, nil
}

func (s *Server) getBranch(c *call) error {
	b, err := c.findBranch(c.str("branch"))
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, s.branchJSON(c.project, b))
}

// protectBranch serves PUT .../branches/<name>/protect and /unprotect. It
// is idempotent and answers 200 with the branch each time.
func (s *Server) protectBranch(c *call) error {
	rest := c.str("branch")
	name, protect := strings.CutSuffix(rest, "/protect")
	if !protect {
		var ok bool
		if name, ok = strings.CutSuffix(rest, "/unprotect"); !ok {
			return errStatus(http.StatusMethodNotAllowed, "405 Method Not Allowed")
		}
	}
	b, err := c.findBranch(name)
	if err != nil {
		return err
	}
	p := c.project
	b.protected = protect
	if b.name == p.defaultBranch {
		p.defaultUnprotected = !protect
	}
	return c.json(http.StatusOK, s.branchJSON(p, b))
}

// AddBranch creates or moves a branch of a project to commit (a fresh
// commit id when commit is "") and returns the commit id. An unknown
// project or a blank name is a mistake (see Err) and returns "".
func (s *Server) AddBranch(projectID int, name, commit string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	if p == nil || strings.Trim(name, "/") == "" {
		s.misuse("AddBranch: no project %d or a blank branch name %q", projectID, name)
		return ""
	}
	return s.addBranch(p, name, commit).commitID
}
