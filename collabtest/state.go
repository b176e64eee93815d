package collabtest

import (
	"strings"
	"time"
)

// db is the whole in-memory state. Every field is guarded by Server.mu.
// Each resource's record type lives in the file of its handlers; the
// fields listed there are shared, so other files may read them.
type db struct {
	lastID        int
	users         map[int]*user
	tokens        map[string]*token
	projects      map[int]*project
	groups        map[int]*group
	events        []*event
	hooks         map[int]*hook
	issues        map[int]*issue
	mergeRequests map[int]*mergeRequest
	labels        map[int]*label
	notes         map[int]*note
	milestones    map[int]*milestone
	awards        map[int]*award
	builds        map[int]*build
	runners       map[int]*runner
	uploads       map[string][]byte // by upload URL
	settings      *appSettings
	// attachmentLimit and artifactsLimit override the settings' upload
	// limits, in bytes, when > 0.
	attachmentLimit, artifactsLimit int64
}

func (d *db) init() {
	d.users = map[int]*user{}
	d.tokens = map[string]*token{}
	d.projects = map[int]*project{}
	d.groups = map[int]*group{}
	d.hooks = map[int]*hook{}
	d.issues = map[int]*issue{}
	d.mergeRequests = map[int]*mergeRequest{}
	d.labels = map[int]*label{}
	d.notes = map[int]*note{}
	d.milestones = map[int]*milestone{}
	d.awards = map[int]*award{}
	d.builds = map[int]*build{}
	d.runners = map[int]*runner{}
	d.uploads = map[string][]byte{}
	d.settings = defaultSettings()
}

type token struct {
	userID int
	kind   TokenKind
}

type user struct {
	id                                     int
	username, name, email, state           string
	admin, canCreateGroup                  bool
	createdAt                              time.Time
	bio, linkedin, skype, twitter, website string
	namespaceID                            int // the user's personal namespace
}

// brief renders the user as embedded in most records.
func (u *user) brief(baseURL string) map[string]any {
	if u == nil {
		return nil
	}
	return map[string]any{
		"id": u.id, "name": u.name, "username": u.username, "state": u.state,
		"avatar_url": nil, "web_url": baseURL + "/" + u.username,
	}
}

// full renders the user variant embedded in build records.
func (u *user) full(baseURL string) map[string]any {
	if u == nil {
		return nil
	}
	m := u.brief(baseURL)
	m["bio"], m["created_at"], m["is_admin"] = orNil(u.bio), ts(u.createdAt), u.admin
	m["linkedin"], m["skype"], m["twitter"], m["website_url"] = u.linkedin, u.skype, u.twitter, u.website
	return m
}

// userJSON renders the brief form of user id, or null.
func (s *Server) userJSON(id int) any {
	if u := s.users[id]; u != nil {
		return u.brief(s.URL)
	}
	return nil
}

// Event actions recorded as projects change.
const (
	actionOpened    = "opened"
	actionClosed    = "closed"
	actionCommented = "commented on"
	actionCreated   = "created"
	actionUpdated   = "updated"
	actionMerged    = "accepted"
	actionJoined    = "joined"
)

type event struct {
	id, projectID, authorID int
	action                  string
	targetType              string // Issue, MergeRequest, Note, Milestone or ""
	targetID                int
	targetTitle             string
	noteID                  int // for comment events
	createdAt               time.Time
}

// addEvent records project activity; GET /projects/:id/events lists it newest first.
func (s *Server) addEvent(projectID, authorID int, action, targetType string, targetID int, targetTitle string, noteID int) {
	s.events = append(s.events, &event{
		id: s.newID(), projectID: projectID, authorID: authorID, action: action,
		targetType: targetType, targetID: targetID, targetTitle: targetTitle, noteID: noteID, createdAt: s.now(),
	})
	if p := s.projects[projectID]; p != nil {
		p.lastActivityAt = s.now()
	}
}

// lookupProject finds a project by id or "namespace/path".
func (s *Server) lookupProject(key string) *project {
	if isDigits(key) {
		return s.projects[atoi(key)]
	}
	for _, p := range s.projects {
		if strings.EqualFold(s.projectFullPath(p), key) {
			return p
		}
	}
	return nil
}

// namespacePath is the path of the namespace a project lives in.
func (s *Server) namespacePath(p *project) string {
	if g := s.groups[p.groupID]; g != nil {
		return g.path
	}
	if u := s.users[p.ownerID]; u != nil {
		return u.username
	}
	return ""
}

func (s *Server) projectFullPath(p *project) string { return s.namespacePath(p) + "/" + p.path }

// accessLevel is u's effective level on p: the higher of its project and group membership.
func (s *Server) accessLevel(u *user, p *project) int {
	if u == nil || p == nil {
		return 0
	}
	lvl := p.members[u.id]
	if p.ownerID == u.id {
		lvl = max(lvl, 50)
	}
	if g := s.groups[p.groupID]; g != nil {
		lvl = max(lvl, g.members[u.id])
	}
	for gid, access := range p.sharedWith {
		if g := s.groups[gid]; g != nil && g.members[u.id] > 0 {
			lvl = max(lvl, min(access, g.members[u.id]))
		}
	}
	return lvl
}

// canSee applies the visibility rules: public and internal projects are
// visible to every signed-in user, private ones to members and admins.
func (s *Server) canSee(u *user, p *project) bool {
	return u != nil && p != nil && (u.admin || p.visibility >= 10 || s.accessLevel(u, p) > 0)
}

// isOwner reports admin or project owner rights (owner level 50 or the namespace owner).
func (s *Server) isOwner(u *user, p *project) bool {
	return u != nil && (u.admin || s.accessLevel(u, p) >= 50)
}

// AddProject creates a project owned by ownerID in the owner's namespace,
// with a master branch and a runners token, and returns its id. An unknown
// owner, a blank name or a bad visibility is a mistake (see Err) and
// returns 0.
func (s *Server) AddProject(ownerID int, name string, visibility Visibility) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.users[ownerID] == nil:
		s.misuse("AddProject: no user %d", ownerID)
	case !validPath(slug(name)):
		s.misuse("AddProject: name %q makes no valid path", name)
	case !visibility.valid():
		s.misuse("AddProject: visibility %d is not Private, Internal or Public", visibility)
	case s.pathTaken(ownerID, 0, slug(name), 0):
		s.misuse("AddProject: %q is taken", name)
	default:
		return s.createProject(ownerID, 0, name, int(visibility)).id
	}
	return 0
}

// createProject makes a project in a user's namespace (groupID 0) or a group's.
func (s *Server) createProject(ownerID, groupID int, name string, visibility int) *project {
	now := s.now()
	p := &project{
		id: s.newID(), name: name, path: slug(name), visibility: visibility, defaultBranch: "master",
		ownerID: ownerID, groupID: groupID, creatorID: ownerID, createdAt: now, lastActivityAt: now,
		issuesEnabled: true, mergeRequestsEnabled: true, buildsEnabled: true, wikiEnabled: true, snippetsEnabled: false,
		sharedRunnersEnabled: true, tagList: []string{},
		members: map[int]int{}, starredBy: map[int]bool{}, sharedWith: map[int]int{},
		branches: map[string]*branch{}, runnersToken: "rtok-" + randomHex(10),
	}
	if groupID != 0 {
		p.ownerID = 0
	}
	if ownerID != 0 {
		p.members[ownerID] = 50
	}
	s.projects[p.id] = p
	s.addBranch(p, "master", "")
	s.addEvent(p.id, ownerID, actionCreated, "", 0, "", 0)
	return p
}

// slug derives a path from a name as the server does.
func slug(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// AddMember gives userID a level on a project. An unknown project or user,
// or a level other than the five, is a mistake (see Err).
func (s *Server) AddMember(projectID, userID int, level AccessLevel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	switch {
	case p == nil || s.users[userID] == nil:
		s.misuse("AddMember: no project %d or no user %d", projectID, userID)
	case !level.valid():
		s.misuse("AddMember: access level %d is not one of Guest..Owner", level)
	default:
		p.members[userID] = int(level)
	}
}

// ProjectRunnersToken returns a project's CI token (the build token), or
// "" for an unknown project.
func (s *Server) ProjectRunnersToken(projectID int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.projects[projectID]; p != nil {
		return p.runnersToken
	}
	return ""
}
