package collabtest

import "time"

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

func (s *Server) branchRoutes() {}
