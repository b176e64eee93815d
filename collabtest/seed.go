package collabtest

import (
	"encoding/json"
	"strings"

	"github.com/collabsvc/collab"
)

// Seeder sets the scene of a test with the API's own types: visibilities
// and access levels are collab.VisibilityLevel and collab.AccessLevel, people
// are User values, and each method returns the record the API answers
// with, as the administrator sees it. Reach it as Server.Seed.
//
// A seed agrees with what a deployed server could hold: an issue's labels
// exist in its project, a merge request's branches in its repository. A
// bad argument never panics: it fails the test of a server made by
// NewTestServer, is kept for Err otherwise, and the method returns nil.
type Seeder struct{ s *Server }

// User creates an active user who is not an administrator, with a private
// token (User.Token).
func (sd *Seeder) User(username string) User { return sd.s.AddUser(username, false) }

// Admin creates an active administrator, with a private token.
func (sd *Seeder) Admin(username string) User { return sd.s.AddUser(username, true) }

// Token gives u another token of the given kind and returns it.
func (sd *Seeder) Token(u User, kind TokenKind) string { return sd.s.AddToken(u.ID, kind) }

// Project creates a project in owner's namespace, with a master branch.
func (sd *Seeder) Project(owner User, name string, visibility collab.VisibilityLevel) *collab.Project {
	return sd.project(sd.s.AddProject(owner.ID, name, int(visibility)))
}

// Group creates a group owned by owner.
func (sd *Seeder) Group(owner User, name, path string, visibility collab.VisibilityLevel) *collab.Group {
	id := sd.s.AddGroup(owner.ID, name, path, int(visibility))
	return seeded[collab.Group](sd.s, id, sd.s.groups, func(g *group) any { return sd.s.groupJSON(g, false, sd.s.users[sd.s.AdminID]) })
}

// GroupProject creates a project in group g, made by creator.
func (sd *Seeder) GroupProject(g *collab.Group, creator User, name string, visibility collab.VisibilityLevel) *collab.Project {
	if g == nil {
		sd.s.misuse("Seed.GroupProject: nil group")
		return nil
	}
	return sd.project(sd.s.AddGroupProject(g.ID, creator.ID, name, int(visibility)))
}

// Member gives u an access level in project p and returns the member.
func (sd *Seeder) Member(p *collab.Project, u User, level collab.AccessLevel) *collab.Member {
	if sd.missing("Member", p) {
		return nil
	}
	sd.s.AddMember(p.ID, u.ID, int(level))
	if !validLevel(int(level)) {
		return nil
	}
	return sd.member(u, func() int { return sd.s.projects[p.ID].members[u.ID] })
}

// GroupMember gives u an access level in group g and returns the member.
func (sd *Seeder) GroupMember(g *collab.Group, u User, level collab.AccessLevel) *collab.Member {
	if g == nil {
		sd.s.misuse("Seed.GroupMember: nil group")
		return nil
	}
	sd.s.AddGroupMember(g.ID, u.ID, int(level))
	if !validLevel(int(level)) {
		return nil
	}
	return sd.member(u, func() int { return sd.s.groups[g.ID].members[u.ID] })
}

// Label creates a label in project p; color is "#RRGGBB". A label of that
// name that p already has is returned as it is, so that seeds can name the
// labels they need without counting who made them first.
func (sd *Seeder) Label(p *collab.Project, name, color string) *collab.Label {
	if sd.missing("Label", p) {
		return nil
	}
	s := sd.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[p.ID] == nil || strings.TrimSpace(name) == "" || !colorRE.MatchString(color) {
		s.misuse("Seed.Label: no project %d, a blank name %q, or a color %q not #RRGGBB", p.ID, name, color)
		return nil
	}
	l := s.findLabel(p.ID, name)
	if l == nil {
		s.ensureLabels(p.ID, []string{name})
		l = s.findLabel(p.ID, name)
		l.color = color
	}
	return toRecord[collab.Label](s.labelJSON(l, s.users[s.AdminID]))
}

// Branch creates a branch of project p at a new commit, or moves an
// existing one to a new commit whose parent is the old head.
func (sd *Seeder) Branch(p *collab.Project, name string) *collab.Branch {
	if sd.missing("Branch", p) || sd.s.AddBranch(p.ID, name, "") == "" {
		return nil
	}
	s := sd.s
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.projects[p.ID]
	return toRecord[collab.Branch](s.branchJSON(pr, pr.branches[name]))
}

// Milestone creates an active milestone in project p.
func (sd *Seeder) Milestone(p *collab.Project, title string) *collab.Milestone {
	if sd.missing("Milestone", p) {
		return nil
	}
	s := sd.s
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := &milestone{projectID: p.ID, title: title, state: "active", createdAt: s.now()}
	ms.updatedAt = ms.createdAt
	for _, other := range s.milestones {
		if other.projectID == p.ID {
			ms.iid = max(ms.iid, other.iid)
			if other.title == title {
				title = ""
			}
		}
	}
	if s.projects[p.ID] == nil || strings.TrimSpace(title) == "" {
		s.misuse("Seed.Milestone: no project %d, or a blank or taken title %q", p.ID, ms.title)
		return nil
	}
	ms.id, ms.iid = s.newID(), ms.iid+1
	s.milestones[ms.id] = ms
	return toRecord[collab.Milestone](s.milestoneJSON(ms))
}

// Issue opens an issue in project p by author, with labels of p.
func (sd *Seeder) Issue(p *collab.Project, author User, title string, labels ...*collab.Label) *collab.Issue {
	names, ok := sd.labelNames(p, labels)
	if !ok {
		return nil
	}
	return sd.issue(sd.s.AddIssue(p.ID, author.ID, title, names...))
}

// MergeRequest opens a merge request in project p by author, from branch
// source into branch target, both of p's repository.
func (sd *Seeder) MergeRequest(p *collab.Project, author User, source, target, title string) *collab.MergeRequest {
	if sd.missing("MergeRequest", p) {
		return nil
	}
	s := sd.s
	s.mu.Lock()
	missing := ""
	if pr := s.projects[p.ID]; pr != nil {
		for _, name := range []string{target, source} {
			if pr.branches[name] == nil {
				missing = name
			}
		}
	}
	s.mu.Unlock()
	if missing != "" {
		s.misuse("Seed.MergeRequest: project %d has no branch %q (make it with Seed.Branch)", p.ID, missing)
		return nil
	}
	id := s.AddMergeRequest(p.ID, author.ID, source, target, title)
	return seeded[collab.MergeRequest](s, id, s.mergeRequests, func(mr *mergeRequest) any {
		return s.mergeRequestJSON(mr, s.users[s.AdminID])
	})
}

// IssueNote comments on issue is as author.
func (sd *Seeder) IssueNote(is *collab.Issue, author User, body string) *collab.Note {
	if is == nil {
		sd.s.misuse("Seed.IssueNote: nil issue")
		return nil
	}
	return sd.note(sd.s.AddNote(is.ProjectID, "Issue", is.ID, author.ID, body))
}

// MergeRequestNote comments on merge request mr as author.
func (sd *Seeder) MergeRequestNote(mr *collab.MergeRequest, author User, body string) *collab.Note {
	if mr == nil {
		sd.s.misuse("Seed.MergeRequestNote: nil merge request")
		return nil
	}
	return sd.note(sd.s.AddNote(mr.ProjectID, "MergeRequest", mr.ID, author.ID, body))
}

// Build adds a build to project p, as spec says.
func (sd *Seeder) Build(p *collab.Project, spec BuildSpec) *collab.Build {
	if sd.missing("Build", p) {
		return nil
	}
	id := sd.s.AddBuild(p.ID, spec)
	return seeded[collab.Build](sd.s, id, sd.s.builds, func(b *build) any { return sd.s.buildJSON(b) })
}

// RefuseRefChanges installs (refuse true) or removes a Git hook in project
// p's repository that refuses every branch created or removed, so that the
// API answers as when a server-side hook says no.
func (sd *Seeder) RefuseRefChanges(p *collab.Project, refuse bool) {
	if sd.missing("RefuseRefChanges", p) {
		return
	}
	seedChange(sd.s, "Seed.RefuseRefChanges", "project", sd.s.projects, p.ID, func(pr *project) { pr.refusesRefs = refuse })
}

// missing reports a nil project as a mistake.
func (sd *Seeder) missing(helper string, p *collab.Project) bool {
	if p == nil {
		sd.s.misuse("Seed.%s: nil project", helper)
	}
	return p == nil
}

// labelNames are the names of labels, each of which must exist in p.
func (sd *Seeder) labelNames(p *collab.Project, labels []*collab.Label) ([]string, bool) {
	if sd.missing("Issue", p) {
		return nil, false
	}
	s := sd.s
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(labels))
	for _, l := range labels {
		if l == nil || s.findLabel(p.ID, l.Name) == nil {
			s.misuse("Seed.Issue: a label that project %d does not have (make it with Seed.Label)", p.ID)
			return nil, false
		}
		names = append(names, l.Name)
	}
	return names, true
}

func (sd *Seeder) project(id int) *collab.Project {
	return seeded[collab.Project](sd.s, id, sd.s.projects, func(p *project) any { return sd.s.projectJSON(p, sd.s.users[sd.s.AdminID]) })
}

func (sd *Seeder) issue(id int) *collab.Issue {
	return seeded[collab.Issue](sd.s, id, sd.s.issues, func(is *issue) any { return sd.s.issueJSON(is, sd.s.users[sd.s.AdminID], true) })
}

func (sd *Seeder) note(id int) *collab.Note {
	return seeded[collab.Note](sd.s, id, sd.s.notes, func(n *note) any { return sd.s.noteJSON(n) })
}

// member renders u's membership at the level level reads, or nil when the
// seed failed.
func (sd *Seeder) member(u User, level func() int) *collab.Member {
	s := sd.s
	s.mu.Lock()
	defer s.mu.Unlock()
	usr := s.users[u.ID]
	if usr == nil {
		return nil
	}
	l := level()
	if l == 0 {
		return nil
	}
	return toRecord[collab.Member](s.memberJSON(usr, l, true))
}

// seeded renders records[id] as the record type T, or nil for id 0 (a
// seed that failed).
func seeded[T, R any](s *Server, id int, records map[int]*R, render func(*R) any) *T {
	if id == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return toRecord[T](render(records[id]))
}

// toRecord turns the fake's rendering of an answer into the SDK's record.
func toRecord[T any](v any) *T {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the fake's own renderings always encode
	}
	var r T
	if err := json.Unmarshal(b, &r); err != nil {
		panic(err) // and decode: the SDK's records read every server answer
	}
	return &r
}
