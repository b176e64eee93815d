package collabtest

import (
	"net/http"
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

func (s *Server) branchRoutes() {
	s.handle("GET", "/projects/:id/repository/branches", s.listBranches)
	s.handle("GET", "/projects/:id/repository/branches/:branch", s.getBranch)
	s.handle("PUT", "/projects/:id/repository/branches/:branch/protect", s.protectBranch(true))
	s.handle("PUT", "/projects/:id/repository/branches/:branch/unprotect", s.protectBranch(false))
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

func (s *Server) listBranches(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	var out []*branch
	for _, b := range p.branches {
		out = append(out, b)
	}
	sortItems(c, out, "asc", func(b *branch) string { return b.name }, func(*branch) int { return 0 })
	all(c, out, func(b *branch) any { return s.branchJSON(p, b) })
}

// projectBranch resolves :branch, answering "404 Branch Not Found".
func (c *call) projectBranch(p *project) *branch {
	b := p.branches[c.params["branch"]]
	if b == nil {
		c.notFound("Branch")
	}
	return b
}

func (s *Server) getBranch(c *call) {
	if p := c.project(); p != nil {
		if b := c.projectBranch(p); b != nil {
			c.json(http.StatusOK, s.branchJSON(p, b))
		}
	}
}

// protectBranch is idempotent and answers 200 with the branch each time.
func (s *Server) protectBranch(protect bool) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil || !c.requireLevel(p, 40) {
			return
		}
		b := c.projectBranch(p)
		if b == nil {
			return
		}
		b.protected = protect
		if b.name == p.defaultBranch {
			p.defaultUnprotected = !protect
		}
		c.json(http.StatusOK, s.branchJSON(p, b))
	}
}

// AddBranch creates or moves a branch of a project to commit (a fresh
// commit id when commit is "") and returns the commit id.
func (s *Server) AddBranch(projectID int, name, commit string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	if p == nil {
		return ""
	}
	return s.addBranch(p, name, commit).commitID
}
