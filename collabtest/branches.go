package collabtest

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
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
	s.api("POST /projects/{id}/repository/branches", rule{level: levelDeveloper}, s.createBranch)
	s.api("DELETE /projects/{id}/repository/branches/{branch...}", rule{}, s.deleteBranch)
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
	parents := []*collab.CommitParent{}
	if b.parentID != "" {
		parents = append(parents, &collab.CommitParent{ID: b.parentID})
	}
	person := &collab.EventPerson{Name: b.authorName, Email: b.authorEmail}
	return reply(&collab.Branch{Name: b.name, Protected: s.isProtected(p, b), Commit: &collab.BranchCommit{
		ID: b.commitID, Parents: parents, Tree: b.tree, Message: b.message, Author: person, Committer: person,
		AuthoredDate: apiTime(b.committedAt), CommittedDate: apiTime(b.committedAt),
	}}, branchOmit...)
}

// branchOmit are the keys of a collab.Branch that branch answers leave out:
// later servers' push rules, and the flat variant of the commit's people.
var branchOmit = append([]string{"developers_can_push", "developers_can_merge"},
	serverform.Under("commit", "parent_ids", "author_name", "author_email", "committer_name", "committer_email")...)

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

// createBranch serves POST .../branches: branch_name at ref (a branch or a
// known commit), with the server's 400 reasons in its order, and the push
// hook of a new branch.
func (s *Server) createBranch(c *call) error {
	for _, name := range []string{"branch_name", "ref"} {
		if !c.has(name) {
			return errMissing(name)
		}
	}
	p, name := c.project, c.str("branch_name")
	switch {
	case !validRefName(name):
		return errBadRequest("Branch name is invalid")
	case p.branches[name] != nil:
		return errBadRequest("Branch already exists")
	}
	commit := s.resolveRef(p, c.str("ref"))
	if commit == "" {
		return errBadRequest("Invalid reference name")
	}
	if p.refusesRefs {
		return errBadRequest("Branch creation was rejected by Git hook")
	}
	b := s.addBranch(p, name, commit)
	b.parentID = ""
	s.pushed(p, c.user, actionPushedNew, name, zeroSHA, commit)
	return c.json(http.StatusCreated, s.branchJSON(p, b))
}

// deleteBranch serves DELETE .../branches/<name>, its refusals in the
// server's order.
func (s *Server) deleteBranch(c *call) error {
	b, err := c.findBranch(c.str("branch"))
	p := c.project
	switch {
	case err != nil:
		return errStatus(http.StatusNotFound, "No such branch")
	case b.name == p.defaultBranch:
		return errStatus(http.StatusMethodNotAllowed, "Cannot remove HEAD branch")
	case s.isProtected(p, b):
		return errStatus(http.StatusMethodNotAllowed, "Protected branch cant be removed")
	case !c.user.admin && s.accessLevel(c.user, p) < levelDeveloper:
		return errStatus(http.StatusMethodNotAllowed, "You dont have push access to repo")
	case p.refusesRefs:
		return errBadRequest("Failed to remove branch")
	}
	delete(p.branches, b.name)
	s.pushed(p, c.user, actionDeleted, b.name, b.commitID, zeroSHA)
	return c.json(http.StatusOK, map[string]any{"branch_name": b.name})
}

// resolveRef finds the commit a ref names: a branch (or refs/heads/ and
// the branch), or the id, or a prefix of 7 or more characters, of a commit
// a branch points at or came from. "" when it names nothing.
func (s *Server) resolveRef(p *project, ref string) string {
	if b := p.branches[strings.TrimPrefix(ref, "refs/heads/")]; b != nil {
		return b.commitID
	}
	if len(ref) < 7 {
		return ""
	}
	for _, name := range slices.Sorted(maps.Keys(p.branches)) {
		b := p.branches[name]
		for _, id := range []string{b.commitID, b.parentID} {
			if id != "" && strings.HasPrefix(id, strings.ToLower(ref)) {
				return id
			}
		}
	}
	return ""
}

// validRefName applies git check-ref-format to refs/heads/<name>, as the
// server does, and refuses names that already start with refs/heads/ or
// refs/remotes/.
func validRefName(name string) bool {
	if name == "" || name == "@" || strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/remotes/") ||
		strings.HasSuffix(name, ".") || strings.Contains(name, "..") || strings.Contains(name, "@{") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	return true
}

// AddBranch creates or moves a branch of a project to commit (a fresh
// commit id when commit is "") and returns the commit id. An unknown
// project or a blank name is a mistake (see Err) and returns "".
//
// Deprecated: Use Seed.Branch, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
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
