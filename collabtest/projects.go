package collabtest

import (
	"cmp"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
)

type project struct {
	id                                                 int
	name, path, description, defaultBranch             string
	visibility                                         int // 0, 10 or 20
	ownerID                                            int // 0 for group projects
	groupID                                            int // 0 for personal projects
	creatorID                                          int
	createdAt, lastActivityAt                          time.Time
	issuesEnabled, mergeRequestsEnabled, buildsEnabled bool
	wikiEnabled, snippetsEnabled, containerRegistry    bool
	publicBuilds, sharedRunnersEnabled, archived       bool
	tagList                                            []string
	importURL                                          string
	members                                            map[int]int // user id -> access level
	starredBy                                          map[int]bool
	sharedWith                                         map[int]int // group id -> access level
	forkedFromID                                       int
	forkLink                                           forkLink // the relation's record, once set
	branches                                           map[string]*branch
	runnersToken                                       string
	defaultUnprotected                                 bool // the default branch was unprotected by hand
	refusesRefs                                        bool // a Git hook refuses every branch created or removed
}

// Literal routes come before the parameterised ones they would otherwise
// shadow (/projects/search/... before /projects/{id}/...).
func (s *Server) projectRoutes() {
	s.api("GET /projects", rule{}, s.listProjects("accessible"))
	s.api("GET /projects/owned", rule{}, s.listProjects("owned"))
	s.api("GET /projects/starred", rule{}, s.listProjects("starred"))
	s.api("GET /projects/all", rule{admin: true}, s.listProjects("all"))
	s.api("GET /projects/search/{query}", rule{}, s.listProjects("search"))
	s.api("POST /projects", rule{}, s.postProject)
	s.api("POST /projects/user/{user_id}", rule{admin: true}, s.postProject)
	s.api("POST /projects/fork/{id}", rule{}, s.forkProject)
	s.api("GET /projects/{id}", rule{}, s.getProject)
	s.api("PUT /projects/{id}", rule{level: levelMaster}, s.updateProject)
	s.api("DELETE /projects/{id}", rule{level: levelOwner}, s.deleteProject)
	s.api("GET /projects/{id}/events", rule{}, s.listEvents)
	s.api("POST /projects/{id}/star", rule{}, s.starProject(true))
	s.api("DELETE /projects/{id}/star", rule{}, s.starProject(false))
	s.api("POST /projects/{id}/archive", rule{level: levelOwner}, s.archiveProject(true))
	s.api("POST /projects/{id}/unarchive", rule{level: levelOwner}, s.archiveProject(false))
	s.api("POST /projects/{id}/uploads", rule{level: levelReporter, upload: true}, s.uploadFile)
	s.api("POST /projects/{id}/share", rule{level: levelMaster}, s.shareProject)
	s.api("POST /projects/{id}/fork/{forked_from_id}", rule{admin: true}, s.createForkRelation)
	s.api("DELETE /projects/{id}/fork", rule{admin: true}, s.deleteForkRelation)
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

// namespaceOf returns the path and name of the namespace a project lives
// in: its group's, else its owner's.
func (s *Server) namespaceOf(p *project) (path, name string) {
	if g := s.groups[p.groupID]; g != nil {
		return g.path, g.name
	}
	if u := s.users[p.ownerID]; u != nil {
		return u.username, u.name
	}
	return "", ""
}

// namespacePath is the path of the namespace a project lives in.
func (s *Server) namespacePath(p *project) string {
	path, _ := s.namespaceOf(p)
	return path
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
//
// Deprecated: Use Seed.Project, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddProject(ownerID int, name string, visibility int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.users[ownerID] == nil:
		s.misuse("AddProject: no user %d", ownerID)
	case !validPath(slug(name)):
		s.misuse("AddProject: name %q makes no valid path", name)
	case !validVisibility(visibility):
		s.misuse("AddProject: visibility %d is not 0, 10 or 20 (private, internal or public)", visibility)
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
//
// Deprecated: Use Seed.Member, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddMember(projectID, userID, level int) {
	seedMember(s, "AddMember", "project", s.projects, projectID, func(p *project) map[int]int { return p.members }, userID, level)
}

// seedMember is AddMember and AddGroupMember: it gives userID a level among
// the members of the project or group (kind) in[id], which members reads.
func seedMember[T any](s *Server, helper, kind string, in map[int]*T, id int, members func(*T) map[int]int, userID, level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var levels map[int]int
	if r := in[id]; r != nil {
		levels = members(r)
	}
	switch {
	case levels == nil || s.users[userID] == nil:
		s.misuse("%s: no %s %d or no user %d", helper, kind, id, userID)
	case !validLevel(level):
		s.misuse("%s: access level %d is not 10, 20, 30, 40 or 50 (guest..owner)", helper, level)
	default:
		levels[userID] = level
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

// projectJSON renders p for caller u: the owner of a user's project, the
// runners token for owners, the source of a fork.
func (s *Server) projectJSON(p *project, u *user) any {
	a := reply(s.projectRecord(p, u), "runners_token")
	if s.users[p.ownerID] == nil || p.groupID != 0 {
		a.omit = append(a.omit, "owner")
	}
	a.omit = append(a.omit, serverform.Under("owner", "username", "state", "avatar_url", "web_url", "email")...)
	if p.groupID != 0 {
		a.omit = append(a.omit, "namespace.request_access_enabled")
	} else {
		a.omit = append(a.omit, serverform.Under("namespace", "avatar", "share_with_group_lock", "visibility_level",
			"request_access_enabled")...)
	}
	if s.projects[p.forkedFromID] == nil {
		a.omit = append(a.omit, "forked_from_project")
	}
	if s.isOwner(u, p) {
		a.clear = map[string]any{"runners_token": p.runnersToken}
	}
	return a
}

// projectRecord is p as a record for caller u, with every variant's keys.
func (s *Server) projectRecord(p *project, u *user) *collab.Project {
	web := s.URL + "/" + s.projectFullPath(p)
	rec := &collab.Project{
		ID: p.id, Name: p.name, Path: p.path, NameWithNamespace: s.namespaceName(p) + " / " + p.name,
		PathWithNamespace: s.projectFullPath(p), Description: serverform.Str(p.description),
		DefaultBranch: p.defaultBranch, Public: p.visibility == 20, VisibilityLevel: collab.VisibilityLevel(p.visibility),
		SSHURLToRepo: "git@" + s.host() + ":" + s.projectFullPath(p) + ".git", HTTPURLToRepo: web + ".git",
		WebURL: web, TagList: p.tagList, IssuesEnabled: p.issuesEnabled, MergeRequestsEnabled: p.mergeRequestsEnabled,
		BuildsEnabled: p.buildsEnabled, WikiEnabled: p.wikiEnabled, SnippetsEnabled: p.snippetsEnabled,
		ContainerRegistryEnabled: p.containerRegistry, PublicBuilds: p.publicBuilds,
		SharedRunnersEnabled: p.sharedRunnersEnabled, Archived: p.archived, OpenIssuesCount: s.openIssues(p.id),
		ForksCount: s.forksOf(p.id), StarCount: len(p.starredBy), CreatorID: p.creatorID,
		CreatedAt: apiTime(p.createdAt), LastActivityAt: apiTime(p.lastActivityAt), Namespace: s.namespaceRecord(p),
		Permissions: s.permissionsRecord(p, u), SharedWithGroups: []*collab.SharedGroup{},
	}
	if o := s.users[p.ownerID]; o != nil {
		rec.Owner = &collab.User{ID: o.id, Name: o.name, CreatedAt: apiTime(o.createdAt)}
	}
	if f := s.projects[p.forkedFromID]; f != nil {
		fweb := s.URL + "/" + s.projectFullPath(f)
		rec.ForkedFromProject = &collab.ForkedFromProject{ID: f.id, Name: f.name, Path: f.path,
			NameWithNamespace: s.namespaceName(f) + " / " + f.name, PathWithNamespace: s.projectFullPath(f),
			HTTPURLToRepo: fweb + ".git", WebURL: fweb}
	}
	for _, gid := range sortedKeys(p.sharedWith) {
		if g := s.groups[gid]; g != nil {
			rec.SharedWithGroups = append(rec.SharedWithGroups, &collab.SharedGroup{GroupID: g.id, GroupName: g.name,
				GroupAccessLevel: collab.AccessLevel(p.sharedWith[gid])})
		}
	}
	return rec
}

// host is the server's host name without the port, as in SSH clone URLs.
func (s *Server) host() string {
	if u, err := url.Parse(s.URL); err == nil {
		return u.Hostname()
	}
	return "localhost"
}

// namespaceName is the name of the namespace a project lives in.
func (s *Server) namespaceName(p *project) string {
	_, name := s.namespaceOf(p)
	return name
}

// namespaceRecord is the namespace p lives in, with the keys of both
// variants (projectJSON leaves out those of the other).
func (s *Server) namespaceRecord(p *project) *collab.ProjectNamespace {
	if g := s.groups[p.groupID]; g != nil {
		return &collab.ProjectNamespace{ID: g.id, Name: g.name, Path: g.path, Description: &g.description,
			CreatedAt: apiTime(g.createdAt), UpdatedAt: apiTime(g.createdAt),
			Avatar: &collab.NamespaceAvatar{URL: serverform.Str(g.avatarURL)}, VisibilityLevel: collab.VisibilityLevel(g.visibility)}
	}
	u := s.users[p.ownerID]
	if u == nil {
		return nil
	}
	return &collab.ProjectNamespace{ID: u.namespaceID, Name: u.username, Path: u.username, Description: new(string),
		OwnerID: &u.id, CreatedAt: apiTime(u.createdAt), UpdatedAt: apiTime(u.createdAt)}
}

func (s *Server) permissionsRecord(p *project, u *user) *collab.Permissions {
	access := func(level int) *collab.AccessInfo {
		if level == 0 {
			return nil
		}
		return &collab.AccessInfo{AccessLevel: collab.AccessLevel(level), NotificationLevel: 3}
	}
	var groupLevel int
	if g := s.groups[p.groupID]; g != nil && u != nil {
		groupLevel = g.members[u.id]
	}
	var projectLevel int
	if u != nil {
		projectLevel = p.members[u.id]
	}
	return &collab.Permissions{ProjectAccess: access(projectLevel), GroupAccess: access(groupLevel)}
}

func (s *Server) openIssues(projectID int) int {
	n := 0
	for _, is := range s.issues {
		if is.projectID == projectID && is.state == "opened" && !is.deleted {
			n++
		}
	}
	return n
}

func (s *Server) forksOf(projectID int) int {
	n := 0
	for _, p := range s.projects {
		if p.forkedFromID == projectID {
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[int]V) []int {
	return slices.Sorted(maps.Keys(m))
}

// listProjects serves the five project lists with their filters.
func (s *Server) listProjects(kind string) handler {
	return func(c *call) error {
		var out []*project
		for _, p := range s.projects {
			if !s.canSee(c.user, p) {
				continue
			}
			switch kind {
			case "accessible":
				if !c.user.admin && p.visibility == 0 && s.accessLevel(c.user, p) == 0 {
					continue
				}
			case "owned":
				if p.ownerID != c.user.id {
					continue
				}
			case "starred":
				if !p.starredBy[c.user.id] {
					continue
				}
			case "search":
				if !strings.Contains(strings.ToLower(p.name), strings.ToLower(c.str("query"))) {
					continue
				}
			}
			out = append(out, p)
		}
		out, err := s.filterProjects(c, out, kind == "search")
		if err != nil {
			return err
		}
		return page(c, out, func(p *project) any { return s.projectJSON(p, c.user) })
	}
}

// filterProjects applies archived, visibility, search, order_by and sort.
func (s *Server) filterProjects(c *call, in []*project, ascending bool) ([]*project, error) {
	archived, hasArchived := c.boolParam("archived")
	vis := map[string]int{"private": 0, "internal": 10, "public": 20}
	want, hasVis := vis[c.str("visibility")]
	if c.str("visibility") != "" && !hasVis {
		return nil, errInvalid("visibility", "does not have a valid value")
	}
	search := strings.ToLower(c.str("search"))
	out := in[:0:0]
	for _, p := range in {
		if (hasArchived && p.archived != archived) || (hasVis && p.visibility != want) ||
			(search != "" && !strings.Contains(strings.ToLower(p.name+" "+p.path+" "+p.description), search)) {
			continue
		}
		out = append(out, p)
	}
	def := "desc"
	if ascending {
		def = "asc"
	}
	id := func(p *project) int { return p.id }
	switch c.str("order_by") {
	case "id":
		sortItems(c, out, def, id, id)
	case "name":
		sortItems(c, out, def, func(p *project) string { return strings.ToLower(p.name) }, id)
	case "path":
		sortItems(c, out, def, func(p *project) string { return p.path }, id)
	case "updated_at", "last_activity_at":
		sortItems(c, out, def, func(p *project) int64 { return p.lastActivityAt.UnixNano() }, id)
	case "", "created_at":
		sortItems(c, out, def, func(p *project) int64 { return p.createdAt.UnixNano() }, id)
	default:
		return nil, errInvalid("order_by", "does not have a valid value")
	}
	if first, _ := c.boolParam("ci_enabled_first"); first {
		slices.SortStableFunc(out, func(a, b *project) int {
			return cmp.Compare(boolRank(!a.buildsEnabled), boolRank(!b.buildsEnabled))
		})
	}
	return out, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) getProject(c *call) error {
	return c.json(http.StatusOK, s.projectJSON(c.project, c.user))
}

// postProject serves POST /projects and, for admins, POST /projects/user/{user_id}.
func (s *Server) postProject(c *call) error {
	owner := c.user
	if c.r.PathValue("user_id") != "" {
		if owner = s.findUser(c.str("user_id")); owner == nil || !isDigits(c.str("user_id")) {
			return errNotFound("User")
		}
	}
	name, _, err := c.nameParam("name", "name", true)
	if err != nil {
		return err
	}
	groupID := 0
	if nsID, present, err := c.intParam("namespace_id"); err != nil {
		return err
	} else if present && nsID != owner.namespaceID {
		g := s.groups[nsID]
		if g == nil || (!c.user.admin && g.members[c.user.id] < levelMaster) {
			return errNotFound("Namespace")
		}
		groupID = g.id
	}
	vis, err := s.visibilityParam(c, s.settings.intValue("default_project_visibility"))
	if err != nil {
		return err
	}
	path := slug(name)
	c.setStr("path", &path)
	if !validPath(path) {
		return errBadPath
	}
	if s.pathTaken(owner.id, groupID, path, 0) {
		return errList(http.StatusBadRequest, "Path has already been taken", "Name has already been taken")
	}
	p := s.createProject(owner.id, groupID, name, vis)
	p.path = path
	s.applyProjectParams(c, p)
	return c.json(http.StatusCreated, s.projectJSON(p, c.user))
}

// visibilityParam reads visibility_level (0, 10, 20) or public=true.
func (s *Server) visibilityParam(c *call, def int) (int, error) {
	vis := def
	if pub, ok := c.boolParam("public"); ok && pub {
		vis = 20
	}
	n, present, err := c.intParam("visibility_level")
	if err != nil {
		return 0, err
	}
	if present {
		if !validVisibility(n) {
			return 0, errInvalid("visibility_level", "is not included in the list")
		}
		vis = n
	}
	return vis, nil
}

// named is what updating a group or a project reads alike.
type named struct {
	visibility int
	name, path string // "" when not sent
}

// namedParams reads visibility_level or public (default vis), name and
// path; a new path must be valid and not taken.
func (s *Server) namedParams(c *call, vis int, taken func(path string) bool) (named, error) {
	var np named
	var err error
	if np.visibility, err = s.visibilityParam(c, vis); err != nil {
		return np, err
	}
	if np.name, _, err = c.nameParam("name", "name", false); err != nil {
		return np, err
	}
	if np.path = c.str("path"); np.path != "" {
		if !validPath(np.path) {
			return np, errBadPath
		}
		if taken(np.path) {
			return np, errInvalid("path", "has already been taken")
		}
	}
	return np, nil
}

// apply stores what was sent.
func (np named) apply(name, path *string, visibility *int) {
	if np.name != "" {
		*name = np.name
	}
	if np.path != "" {
		*path = np.path
	}
	*visibility = np.visibility
}

var errBadPath = errInvalid("path", "can contain only letters, digits, '_', '-' and '.'")

func validPath(p string) bool {
	return p != "" && !strings.HasPrefix(p, ".") && !strings.HasSuffix(p, ".git") && slug(p) == strings.ToLower(p)
}

func (s *Server) pathTaken(ownerID, groupID int, path string, except int) bool {
	for _, q := range s.projects {
		if q.id != except && strings.EqualFold(q.path, path) &&
			((groupID != 0 && q.groupID == groupID) || (groupID == 0 && q.groupID == 0 && q.ownerID == ownerID)) {
			return true
		}
	}
	return false
}

func (s *Server) applyProjectParams(c *call, p *project) {
	c.setStr("description", &p.description)
	c.setStr("import_url", &p.importURL)
	c.setBools(map[string]*bool{
		"issues_enabled": &p.issuesEnabled, "merge_requests_enabled": &p.mergeRequestsEnabled,
		"builds_enabled": &p.buildsEnabled, "wiki_enabled": &p.wikiEnabled, "snippets_enabled": &p.snippetsEnabled,
		"container_registry_enabled": &p.containerRegistry, "public_builds": &p.publicBuilds,
	})
	p.lastActivityAt = s.now()
}

func (s *Server) updateProject(c *call) error {
	p := c.project
	np, err := s.namedParams(c, p.visibility, func(path string) bool { return s.pathTaken(p.ownerID, p.groupID, path, p.id) })
	if err != nil {
		return err
	}
	if c.has("default_branch") {
		if p.branches[c.str("default_branch")] == nil {
			return errInvalid("default_branch", "does not exist")
		}
		p.defaultBranch = c.str("default_branch")
	}
	np.apply(&p.name, &p.path, &p.visibility)
	s.applyProjectParams(c, p)
	s.addEvent(p.id, c.user.id, actionUpdated, "", 0, "", 0)
	return c.json(http.StatusOK, s.projectJSON(p, c.user))
}

// deleteProject removes a project and everything that belongs to it.
func (s *Server) deleteProject(c *call) error {
	s.removeProject(c.project.id)
	return c.json(http.StatusOK, map[string]any{"message": "202 Accepted"})
}

func (s *Server) removeProject(id int) {
	delete(s.projects, id)
	deleteWhere(s.issues, func(v *issue) bool { return v.projectID == id })
	deleteWhere(s.mergeRequests, func(v *mergeRequest) bool { return v.projectID == id })
	deleteWhere(s.labels, func(v *label) bool { return v.projectID == id })
	deleteWhere(s.notes, func(v *note) bool { return v.projectID == id })
	deleteWhere(s.milestones, func(v *milestone) bool { return v.projectID == id })
	deleteWhere(s.builds, func(v *build) bool { return v.projectID == id })
	deleteWhere(s.hooks, func(v *hook) bool { return v.projectID == id })
	s.events = slices.DeleteFunc(s.events, func(e *event) bool { return e.projectID == id })
	for _, q := range s.projects {
		if q.forkedFromID == id {
			q.forkedFromID = 0
		}
	}
}

func deleteWhere[V any](m map[int]V, match func(V) bool) {
	for k, v := range m {
		if match(v) {
			delete(m, k)
		}
	}
}

func (s *Server) forkProject(c *call) error {
	src := c.project
	if s.pathTaken(c.user.id, 0, src.path, 0) {
		return &apiError{status: http.StatusConflict, body: map[string]any{"message": map[string]any{
			"name": []string{"has already been taken"}, "path": []string{"has already been taken"}}}}
	}
	p := s.createProject(c.user.id, 0, src.name, src.visibility)
	p.path, p.description, p.forkedFromID, p.defaultBranch = src.path, src.description, src.id, src.defaultBranch
	for name, b := range src.branches {
		cp := *b
		p.branches[name] = &cp
	}
	return c.json(http.StatusCreated, s.projectJSON(p, c.user))
}

func (s *Server) starProject(star bool) handler {
	return func(c *call) error {
		return c.toggleCaller(c.project.starredBy, star, func() any { return s.projectJSON(c.project, c.user) })
	}
}

func (s *Server) archiveProject(archive bool) handler {
	return func(c *call) error {
		c.project.archived = archive
		return c.json(http.StatusCreated, s.projectJSON(c.project, c.user))
	}
}

func (s *Server) listEvents(c *call) error {
	var out []*event
	for i := len(s.events) - 1; i >= 0; i-- {
		if s.events[i].projectID == c.project.id {
			out = append(out, s.events[i])
		}
	}
	return page(c, out, s.eventJSON)
}

// eventNoteOmit are the keys of a collab.Note that the comment of a
// project event leaves out: it spells the votes "upvote" and "downvote",
// the aliases the codec writes beside "upvote?" and "downvote?".
var eventNoteOmit = append([]string{"updated_at", "upvote?", "downvote?"}, serverform.Under("author", briefUserOmit...)...)

func (s *Server) eventJSON(e *event) any {
	rec := &collab.ProjectEvent{ProjectID: e.projectID, ActionName: e.action, AuthorID: e.authorID,
		Author: s.userRecord(e.authorID), CreatedAt: apiTime(e.createdAt), Data: e.data}
	if u := s.users[e.authorID]; u != nil {
		rec.AuthorUsername = u.username
	}
	if e.targetType != "" {
		rec.TargetID, rec.TargetType, rec.TargetTitle = &e.targetID, &e.targetType, &e.targetTitle
	}
	a := reply(rec, append(serverform.Under("author", briefUserOmit...), "note")...)
	if n := s.notes[e.noteID]; n != nil {
		a.clear = map[string]any{"note": reply(s.noteRecord(n), eventNoteOmit...)}
	}
	return a
}

// maxUploadBytes is the attachment limit in bytes, from settings (megabytes)
// unless SetMaxAttachmentSize overrode it.
func (s *Server) maxUploadBytes() int64 {
	if s.attachmentLimit > 0 {
		return s.attachmentLimit
	}
	return int64(s.settings.intValue("max_attachment_size")) << 20
}

// SetMaxAttachmentSize sets the upload size limit in bytes (by default the
// max_attachment_size setting, 10 MiB). Larger files are refused as the
// server refuses them: 201 with a null body. A size below 1 is a mistake
// (see Err).
func (s *Server) SetMaxAttachmentSize(bytes int64) {
	s.setLimit("SetMaxAttachmentSize", &s.attachmentLimit, bytes)
}

// setLimit sets one of the upload size limits; a size below 1 is a
// mistake (see Err).
func (s *Server) setLimit(helper string, limit *int64, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes < 1 {
		s.misuse("%s: %d bytes", helper, bytes)
		return
	}
	*limit = bytes
}

// uploadFile stores the multipart field "file"; like the deployed server it
// answers 201 with null for a missing or oversized file.
func (s *Server) uploadFile(c *call) error {
	limit := s.maxUploadBytes()
	if c.r.MultipartForm == nil || len(c.r.MultipartForm.File["file"]) == 0 {
		return c.json(http.StatusCreated, nil)
	}
	hdr := c.r.MultipartForm.File["file"][0]
	if hdr.Size > limit {
		return c.json(http.StatusCreated, nil)
	}
	f, err := hdr.Open()
	if err != nil {
		return c.json(http.StatusCreated, nil)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		return c.json(http.StatusCreated, nil)
	}
	name := path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/"))
	url := "/uploads/" + randomHex(16) + "/" + name
	s.uploads[url] = data
	return c.json(http.StatusCreated, reply(projectFileRecord(name, url)))
}

// projectFileRecord is the record of the file name uploaded at url, with
// its Markdown link (an image's shown inline).
func projectFileRecord(name, url string) *collab.ProjectFile {
	ext := strings.ToLower(path.Ext(name))
	rec := &collab.ProjectFile{Alt: strings.TrimSuffix(name, ext), URL: url,
		IsImage: ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".gif" || ext == ".svg"}
	rec.Markdown = "[" + name + "](" + url + ")"
	if rec.IsImage {
		rec.Markdown = "!" + rec.Markdown
	}
	return rec
}

func (s *Server) shareProject(c *call) error {
	gid, err := c.requiredInt("group_id")
	if err != nil {
		return err
	}
	level, err := c.requiredInt("group_access")
	if err != nil {
		return err
	}
	if !validLevel(level) || level == levelOwner {
		return errConflict("Group access is not included in the list")
	}
	if s.groups[gid] == nil {
		return errNotFound("Group")
	}
	c.project.sharedWith[gid] = level
	return c.json(http.StatusCreated, reply(&collab.ProjectShare{ID: s.newID(), ProjectID: c.project.id, GroupID: gid,
		GroupAccess: collab.AccessLevel(level)}))
}

func (s *Server) createForkRelation(c *call) error {
	p := c.project
	from, err := c.pathID("forked_from_id")
	if err != nil {
		return err
	}
	if s.projects[from] == nil {
		return errNotFound("Source Project")
	}
	if p.forkedFromID != 0 {
		return errConflict("409 Project already forked")
	}
	p.forkedFromID = from
	now := s.now()
	p.forkLink = forkLink{id: s.newID(), createdAt: now, updatedAt: now}
	return c.json(http.StatusCreated, reply(p.forkRelationRecord()))
}

// forkRelationRecord is the record of p's fork relation.
func (p *project) forkRelationRecord() *collab.ForkRelation {
	return &collab.ForkRelation{ID: p.forkLink.id, ForkedToProjectID: p.id, ForkedFromProjectID: p.forkedFromID,
		CreatedAt: apiTime(p.forkLink.createdAt), UpdatedAt: apiTime(p.forkLink.updatedAt)}
}

// forkLink is the record of a fork relation, which deployed servers answer
// when an administrator creates one.
type forkLink struct {
	id                   int
	createdAt, updatedAt time.Time
}

func (s *Server) deleteForkRelation(c *call) error {
	p := c.project
	if p.forkedFromID == 0 {
		return errNotModified
	}
	p.forkedFromID = 0
	return c.json(http.StatusOK, s.projectJSON(p, c.user))
}
