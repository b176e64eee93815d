package collabtest

import (
	"cmp"
	"io"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
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
	branches                                           map[string]*branch
	runnersToken                                       string
	defaultUnprotected                                 bool // the default branch was unprotected by hand
}

func (s *Server) projectRoutes() {
	s.handle("GET", "/projects", s.listProjects("accessible"))
	s.handle("GET", "/projects/owned", s.listProjects("owned"))
	s.handle("GET", "/projects/starred", s.listProjects("starred"))
	s.handle("GET", "/projects/all", s.listProjects("all"))
	s.handle("GET", "/projects/search/:query", s.listProjects("search"))
	s.handle("POST", "/projects", s.postProject)
	s.handle("POST", "/projects/user/:user_id", s.postProject)
	s.handle("POST", "/projects/fork/:id", s.forkProject)
	s.handle("GET", "/projects/:id", s.getProject)
	s.handle("PUT", "/projects/:id", s.updateProject)
	s.handle("DELETE", "/projects/:id", s.deleteProject)
	s.handle("GET", "/projects/:id/events", s.listEvents)
	s.handle("POST", "/projects/:id/star", s.starProject(true))
	s.handle("DELETE", "/projects/:id/star", s.starProject(false))
	s.handle("POST", "/projects/:id/archive", s.archiveProject(true))
	s.handle("POST", "/projects/:id/unarchive", s.archiveProject(false))
	s.handle("POST", "/projects/:id/uploads", s.uploadFile)
	s.handle("POST", "/projects/:id/share", s.shareProject)
	s.handle("POST", "/projects/:id/fork/:forked_from_id", s.createForkRelation)
	s.handle("DELETE", "/projects/:id/fork", s.deleteForkRelation)
}

// projectJSON renders a project for caller u.
func (s *Server) projectJSON(p *project, u *user) map[string]any {
	web := s.URL + "/" + s.projectFullPath(p)
	m := map[string]any{
		"id": p.id, "name": p.name, "path": p.path, "description": orNil(p.description), "default_branch": p.defaultBranch,
		"name_with_namespace": s.namespaceName(p) + " / " + p.name, "path_with_namespace": s.projectFullPath(p),
		"public": p.visibility == 20, "visibility_level": p.visibility,
		"ssh_url_to_repo":  "git@" + strings.TrimPrefix(s.URL, "http://") + ":" + s.projectFullPath(p) + ".git",
		"http_url_to_repo": web + ".git", "web_url": web, "tag_list": p.tagList,
		"issues_enabled": p.issuesEnabled, "merge_requests_enabled": p.mergeRequestsEnabled, "builds_enabled": p.buildsEnabled,
		"wiki_enabled": p.wikiEnabled, "snippets_enabled": p.snippetsEnabled, "container_registry_enabled": p.containerRegistry,
		"public_builds": p.publicBuilds, "shared_runners_enabled": p.sharedRunnersEnabled, "archived": p.archived,
		"open_issues_count": s.openIssues(p.id), "forks_count": s.forksOf(p.id), "star_count": len(p.starredBy),
		"creator_id": p.creatorID, "created_at": ts(p.createdAt), "last_activity_at": ts(p.lastActivityAt),
		"namespace": s.namespaceJSON(p), "avatar_url": nil, "permissions": s.permissionsJSON(p, u),
	}
	if o := s.users[p.ownerID]; o != nil && p.groupID == 0 {
		m["owner"] = map[string]any{"id": o.id, "name": o.name, "created_at": ts(o.createdAt)}
	}
	if s.isOwner(u, p) {
		m["runners_token"] = p.runnersToken
	}
	if f := s.projects[p.forkedFromID]; f != nil {
		m["forked_from_project"] = map[string]any{"id": f.id, "name": f.name, "path": f.path,
			"name_with_namespace": s.namespaceName(f) + " / " + f.name, "path_with_namespace": s.projectFullPath(f)}
	}
	shared := []any{}
	for _, gid := range sortedKeys(p.sharedWith) {
		if g := s.groups[gid]; g != nil {
			shared = append(shared, map[string]any{"group_id": g.id, "group_name": g.name, "group_access_level": p.sharedWith[gid]})
		}
	}
	m["shared_with_groups"] = shared
	return m
}

func (s *Server) namespaceName(p *project) string {
	if g := s.groups[p.groupID]; g != nil {
		return g.name
	}
	if u := s.users[p.ownerID]; u != nil {
		return u.name
	}
	return ""
}

func (s *Server) namespaceJSON(p *project) map[string]any {
	if g := s.groups[p.groupID]; g != nil {
		return map[string]any{"id": g.id, "name": g.name, "path": g.path, "description": g.description, "owner_id": nil,
			"created_at": ts(g.createdAt), "updated_at": ts(g.createdAt), "avatar": map[string]any{"url": orNil(g.avatarURL)},
			"share_with_group_lock": false, "visibility_level": g.visibility}
	}
	u := s.users[p.ownerID]
	if u == nil {
		return nil
	}
	return map[string]any{"id": u.namespaceID, "name": u.username, "path": u.username, "description": "", "owner_id": u.id,
		"created_at": ts(u.createdAt), "updated_at": ts(u.createdAt)}
}

func (s *Server) permissionsJSON(p *project, u *user) map[string]any {
	access := func(level int) any {
		if level == 0 {
			return nil
		}
		return map[string]any{"access_level": level, "notification_level": 3}
	}
	var groupLevel int
	if g := s.groups[p.groupID]; g != nil && u != nil {
		groupLevel = g.members[u.id]
	}
	var projectLevel int
	if u != nil {
		projectLevel = p.members[u.id]
	}
	return map[string]any{"project_access": access(projectLevel), "group_access": access(groupLevel)}
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
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// listProjects serves the five project lists with their filters.
func (s *Server) listProjects(kind string) func(*call) {
	return func(c *call) {
		if kind == "all" && !c.requireAdmin() {
			return
		}
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
				if !strings.Contains(strings.ToLower(p.name), strings.ToLower(c.params["query"])) {
					continue
				}
			}
			out = append(out, p)
		}
		out, ok := s.filterProjects(c, out, kind == "search")
		if ok {
			page(c, out, func(p *project) any { return s.projectJSON(p, c.user) })
		}
	}
}

// filterProjects applies archived, visibility, search, order_by and sort.
func (s *Server) filterProjects(c *call, in []*project, ascending bool) ([]*project, bool) {
	archived, hasArchived := c.boolParam("archived")
	vis := map[string]int{"private": 0, "internal": 10, "public": 20}
	want, hasVis := vis[c.str("visibility")]
	if c.str("visibility") != "" && !hasVis {
		c.invalid(map[string]any{"visibility": []string{"does not have a valid value"}})
		return nil, false
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
		c.invalid(map[string]any{"order_by": []string{"does not have a valid value"}})
		return nil, false
	}
	if c.form.Get("ci_enabled_first") != "" {
		if first, _ := c.boolParam("ci_enabled_first"); first {
			slices.SortStableFunc(out, func(a, b *project) int {
				return cmp.Compare(boolRank(!a.buildsEnabled), boolRank(!b.buildsEnabled))
			})
		}
	}
	return out, true
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) getProject(c *call) {
	if p := c.project(); p != nil {
		c.json(http.StatusOK, s.projectJSON(p, c.user))
	}
}

// postProject serves POST /projects and, for admins, POST /projects/user/:user_id.
func (s *Server) postProject(c *call) {
	owner := c.user
	if raw, ok := c.params["user_id"]; ok {
		if !c.requireAdmin() {
			return
		}
		id, _ := strconv.Atoi(raw)
		if owner = s.users[id]; owner == nil {
			c.notFound("User")
			return
		}
	}
	name := strings.TrimSpace(c.str("name"))
	if name == "" {
		c.missing("name")
		return
	}
	groupID := 0
	if nsID, present, ok := c.intParam("namespace_id"); !ok {
		return
	} else if present && nsID != owner.namespaceID {
		g := s.groups[nsID]
		if g == nil || (!c.user.admin && g.members[c.user.id] < 40) {
			c.notFound("Namespace")
			return
		}
		groupID = g.id
	}
	vis, ok := s.visibilityParam(c, s.settings.intValue("default_project_visibility"))
	if !ok {
		return
	}
	path := slug(name)
	c.setStr("path", &path)
	if !validPath(path) {
		c.invalid(map[string]any{"path": []string{"can contain only letters, digits, '_', '-' and '.'"}})
		return
	}
	if s.pathTaken(owner.id, groupID, path, 0) {
		c.failList(http.StatusBadRequest, "Path has already been taken", "Name has already been taken")
		return
	}
	p := s.createProject(owner.id, groupID, name, vis)
	p.path = path
	s.applyProjectParams(c, p)
	c.json(http.StatusCreated, s.projectJSON(p, c.user))
}

// visibilityParam reads visibility_level (0, 10, 20) or public=true.
func (s *Server) visibilityParam(c *call, def int) (int, bool) {
	vis := def
	if pub, ok := c.boolParam("public"); ok && pub {
		vis = 20
	}
	n, present, ok := c.intParam("visibility_level")
	if !ok {
		return 0, false
	}
	if present {
		if n != 0 && n != 10 && n != 20 {
			c.invalid(map[string]any{"visibility_level": []string{"is not included in the list"}})
			return 0, false
		}
		vis = n
	}
	return vis, true
}

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
	c.setBool("issues_enabled", &p.issuesEnabled)
	c.setBool("merge_requests_enabled", &p.mergeRequestsEnabled)
	c.setBool("builds_enabled", &p.buildsEnabled)
	c.setBool("wiki_enabled", &p.wikiEnabled)
	c.setBool("snippets_enabled", &p.snippetsEnabled)
	c.setBool("container_registry_enabled", &p.containerRegistry)
	c.setBool("public_builds", &p.publicBuilds)
	p.lastActivityAt = s.now()
}

func (s *Server) updateProject(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	vis, ok := s.visibilityParam(c, p.visibility)
	if !ok {
		return
	}
	if c.has("name") && strings.TrimSpace(c.str("name")) == "" {
		c.invalid(map[string]any{"name": []string{"can't be blank"}})
		return
	}
	if c.has("path") {
		path := c.str("path")
		if !validPath(path) {
			c.invalid(map[string]any{"path": []string{"can contain only letters, digits, '_', '-' and '.'"}})
			return
		}
		if s.pathTaken(p.ownerID, p.groupID, path, p.id) {
			c.invalid(map[string]any{"path": []string{"has already been taken"}})
			return
		}
		p.path = path
	}
	if c.has("default_branch") {
		if p.branches[c.str("default_branch")] == nil {
			c.invalid(map[string]any{"default_branch": []string{"does not exist"}})
			return
		}
		p.defaultBranch = c.str("default_branch")
	}
	c.setStr("name", &p.name)
	p.visibility = vis
	s.applyProjectParams(c, p)
	s.addEvent(p.id, c.user.id, actionUpdated, "", 0, "", 0)
	c.json(http.StatusOK, s.projectJSON(p, c.user))
}

// deleteProject removes a project and everything that belongs to it.
func (s *Server) deleteProject(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 50) {
		return
	}
	s.removeProject(p.id)
	c.json(http.StatusOK, map[string]any{"message": "202 Accepted"})
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

func (s *Server) forkProject(c *call) {
	src := c.project()
	if src == nil {
		return
	}
	if s.pathTaken(c.user.id, 0, src.path, 0) {
		c.json(http.StatusConflict, map[string]any{"message": map[string]any{"name": []string{"has already been taken"}, "path": []string{"has already been taken"}}})
		return
	}
	p := s.createProject(c.user.id, 0, src.name, src.visibility)
	p.path, p.description, p.forkedFromID, p.defaultBranch = src.path, src.description, src.id, src.defaultBranch
	for name, b := range src.branches {
		cp := *b
		p.branches[name] = &cp
	}
	c.json(http.StatusCreated, s.projectJSON(p, c.user))
}

func (s *Server) starProject(star bool) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		c.toggleCaller(p.starredBy, star, func() any { return s.projectJSON(p, c.user) })
	}
}

func (s *Server) archiveProject(archive bool) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil || !c.requireLevel(p, 50) {
			return
		}
		p.archived = archive
		c.json(http.StatusCreated, s.projectJSON(p, c.user))
	}
}

func (s *Server) listEvents(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	var out []*event
	for i := len(s.events) - 1; i >= 0; i-- {
		if s.events[i].projectID == p.id {
			out = append(out, s.events[i])
		}
	}
	page(c, out, s.eventJSON)
}

func (s *Server) eventJSON(e *event) any {
	m := map[string]any{
		"title": nil, "project_id": e.projectID, "action_name": e.action, "target_id": nil, "target_type": nil,
		"target_title": nil, "author_id": e.authorID, "author": s.userJSON(e.authorID), "author_username": "",
		"created_at": ts(e.createdAt), "data": nil,
	}
	if u := s.users[e.authorID]; u != nil {
		m["author_username"] = u.username
	}
	if e.targetType != "" {
		m["target_id"], m["target_type"], m["target_title"] = e.targetID, e.targetType, e.targetTitle
	}
	if n := s.notes[e.noteID]; n != nil {
		m["note"] = map[string]any{
			"id": n.id, "body": n.body, "attachment": orNil(n.attachment), "author": s.userJSON(n.authorID),
			"created_at": ts(n.createdAt), "system": n.system, "upvote": n.upvote, "downvote": n.downvote,
			"noteable_id": n.noteableID, "noteable_type": n.noteableType,
		}
	}
	return m
}

// maxUploadBytes is the attachment limit in bytes, from settings (megabytes)
// unless SetMaxAttachmentSize overrode it.
func (s *Server) maxUploadBytes() int64 {
	if s.attachmentLimit > 0 {
		return s.attachmentLimit
	}
	return int64(s.settings.intValue("max_attachment_size")) << 20
}

// SetMaxAttachmentSize overrides the upload limit, in bytes, for tests.
func (s *Server) SetMaxAttachmentSize(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attachmentLimit = n
}

// uploadFile stores the multipart field "file"; like the deployed server it
// answers 201 with null for a missing or oversized file.
func (s *Server) uploadFile(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 20) {
		return
	}
	limit := s.maxUploadBytes()
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, limit+1<<20)
	f, hdr, err := c.r.FormFile("file")
	if err != nil {
		c.json(http.StatusCreated, nil)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		c.json(http.StatusCreated, nil)
		return
	}
	name := path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/"))
	url := "/uploads/" + randomHex(16) + "/" + name
	s.uploads[url] = data
	ext := strings.ToLower(path.Ext(name))
	isImage := ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".gif" || ext == ".svg"
	md := "[" + name + "](" + url + ")"
	if isImage {
		md = "!" + md
	}
	c.json(http.StatusCreated, map[string]any{"alt": strings.TrimSuffix(name, ext), "url": url, "is_image": isImage, "markdown": md})
}

func (s *Server) shareProject(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	gid, present, ok := c.intParam("group_id")
	if !ok {
		return
	}
	if !present {
		c.missing("group_id")
		return
	}
	level, present, ok := c.intParam("group_access")
	if !ok {
		return
	}
	if !present {
		c.missing("group_access")
		return
	}
	if level != 10 && level != 20 && level != 30 && level != 40 {
		c.conflict("Group access is not included in the list")
		return
	}
	if s.groups[gid] == nil {
		c.notFound("Group")
		return
	}
	p.sharedWith[gid] = level
	c.json(http.StatusCreated, map[string]any{"id": s.newID(), "project_id": p.id, "group_id": gid, "group_access": level})
}

func (s *Server) createForkRelation(c *call) {
	if !c.requireAdmin() {
		return
	}
	p := c.project()
	if p == nil {
		return
	}
	from, ok := c.pathInt("forked_from_id")
	if !ok {
		return
	}
	if s.projects[from] == nil {
		c.notFound("Project")
		return
	}
	if p.forkedFromID != 0 {
		c.conflict("409 Project already forked")
		return
	}
	p.forkedFromID = from
	c.json(http.StatusCreated, s.projectJSON(p, c.user))
}

func (s *Server) deleteForkRelation(c *call) {
	if !c.requireAdmin() {
		return
	}
	p := c.project()
	if p == nil {
		return
	}
	if p.forkedFromID == 0 {
		c.notModified()
		return
	}
	p.forkedFromID = 0
	c.json(http.StatusOK, s.projectJSON(p, c.user))
}
