package collabtest

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

type mergeRequest struct {
	id, iid, projectID                int
	sourceProjectID, targetProjectID  int
	sourceBranch, targetBranch        string
	title, description, state         string // opened, closed, merged, reopened
	createdAt, updatedAt              time.Time
	authorID, assigneeID, milestoneID int
	labels                            []string
	mergeWhenBuildSucceeds            bool
	shouldRemoveSourceBranch          bool
	mergeCommitMessage                string
	conflicts                         bool // seeded by a helper
	subscribers                       map[int]bool
	deleted                           bool // soft delete
}

// buildStatusChanged is called whenever a build's status changes, so that a
// merge request set to merge when its build succeeds can merge.
func (s *Server) buildStatusChanged(b *build) {
	if b.status != "success" {
		return
	}
	for _, id := range sortedKeys(s.mergeRequests) {
		mr := s.mergeRequests[id]
		if mr.mergeWhenBuildSucceeds && mr.isOpen() && !mr.deleted && mr.sourceProjectID == b.projectID && mr.sourceBranch == b.ref &&
			s.latestBuild(b.projectID, b.ref) == b {
			s.doMerge(mr, mr.authorID)
		}
	}
}

// latestBuild is the newest build of a project's ref, or nil.
func (s *Server) latestBuild(projectID int, ref string) *build {
	var latest *build
	for _, b := range s.builds {
		if b.projectID == projectID && b.ref == ref && (latest == nil || b.id > latest.id) {
			latest = b
		}
	}
	return latest
}

// AddMergeRequest seeds an open merge request and returns its id.
func (s *Server) AddMergeRequest(projectID, authorID int, source, target, title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	mr := &mergeRequest{
		id: s.newID(), iid: s.nextMergeRequestIID(projectID), projectID: projectID, sourceProjectID: projectID, targetProjectID: projectID,
		sourceBranch: source, targetBranch: target, title: title, state: "opened", createdAt: now, updatedAt: now,
		authorID: authorID, labels: []string{}, subscribers: map[int]bool{authorID: true},
	}
	s.mergeRequests[mr.id] = mr
	return mr.id
}

// SetMergeConflict makes a merge request conflict (or not) with its target.
func (s *Server) SetMergeConflict(mergeRequestID int, conflicts bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mr := s.mergeRequests[mergeRequestID]; mr != nil {
		mr.conflicts = conflicts
	}
}

// isOpen covers the two open states.
func (mr *mergeRequest) isOpen() bool { return mr.state == "opened" || mr.state == "reopened" }

func (s *Server) mergeRequestRoutes() {
	base := "/projects/:id/merge_requests"
	s.handle("GET", base, s.listMergeRequests)
	s.handle("POST", base, s.createMergeRequest)
	s.handle("GET", base+"/:mr_id", s.mrHandler(s.getMergeRequest))
	s.handle("PUT", base+"/:mr_id", s.mrHandler(s.updateMergeRequest))
	s.handle("DELETE", base+"/:mr_id", s.mrHandler(s.deleteMergeRequest))
	s.handle("GET", base+"/:mr_id/commits", s.mrHandler(s.mergeRequestCommits))
	s.handle("GET", base+"/:mr_id/changes", s.mrHandler(s.mergeRequestChanges))
	s.handle("PUT", base+"/:mr_id/merge", s.mrHandler(s.acceptMergeRequest))
	s.handle("PUT", base+"/:mr_id/cancel_merge_when_build_succeeds", s.mrHandler(s.cancelMergeWhenBuildSucceeds))
	s.handle("POST", base+"/:mr_id/cancel_merge_when_build_succeeds", s.mrHandler(s.cancelMergeWhenBuildSucceeds))
	s.handle("GET", base+"/:mr_id/closes_issues", s.mrHandler(s.closesIssues))
	s.handle("POST", base+"/:mr_id/subscription", s.mrHandler(s.subscribeMergeRequest(true)))
	s.handle("DELETE", base+"/:mr_id/subscription", s.mrHandler(s.subscribeMergeRequest(false)))
}

// mrHandler resolves the project and :mr_id before calling h.
func (s *Server) mrHandler(h func(*call, *project, *mergeRequest)) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		id, ok := c.pathInt("mr_id")
		if !ok {
			return
		}
		mr := s.mergeRequests[id]
		if mr == nil || mr.deleted || mr.projectID != p.id {
			c.notFound("Merge Request")
			return
		}
		h(c, p, mr)
	}
}

func (mr *mergeRequest) workInProgress() bool {
	t := strings.ToLower(mr.title)
	return strings.HasPrefix(t, "wip:") || strings.HasPrefix(t, "[wip]")
}

func (s *Server) mergeRequestJSON(mr *mergeRequest, u *user) map[string]any {
	up, down := s.votes("MergeRequest", mr.id)
	status := "can_be_merged"
	if mr.conflicts {
		status = "cannot_be_merged"
	}
	m := map[string]any{
		"id": mr.id, "iid": mr.iid, "project_id": mr.projectID, "source_branch": mr.sourceBranch, "target_branch": mr.targetBranch,
		"source_project_id": mr.sourceProjectID, "target_project_id": mr.targetProjectID, "title": mr.title,
		"description": mr.description, "state": mr.state, "created_at": ts(mr.createdAt), "updated_at": ts(mr.updatedAt),
		"upvotes": up, "downvotes": down, "author": s.userJSON(mr.authorID), "assignee": s.userJSON(mr.assigneeID),
		"labels": mr.labels, "milestone": s.milestoneJSON(s.milestones[mr.milestoneID]), "work_in_progress": mr.workInProgress(),
		"merge_when_build_succeeds": mr.mergeWhenBuildSucceeds, "merge_status": status,
		"subscribed": u != nil && mr.subscribers[u.id], "user_notes_count": s.countNotes("MergeRequest", mr.id),
		"should_remove_source_branch": mr.shouldRemoveSourceBranch, "force_remove_source_branch": false,
	}
	return m
}

func (s *Server) listMergeRequests(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	iid, hasIID, ok := c.intParam("iid")
	if !ok {
		return
	}
	state := c.str("state")
	var out []*mergeRequest
	for _, mr := range s.mergeRequests {
		if mr.projectID != p.id || mr.deleted || (hasIID && mr.iid != iid) {
			continue
		}
		switch state {
		case "", "all":
		case "opened":
			if !mr.isOpen() {
				continue
			}
		case "closed", "merged":
			if mr.state != state {
				continue
			}
		default:
			c.invalid(map[string]any{"state": []string{"does not have a valid value"}})
			return
		}
		out = append(out, mr)
	}
	if orderByTime(c, out, func(mr *mergeRequest) time.Time { return mr.createdAt },
		func(mr *mergeRequest) time.Time { return mr.updatedAt }, func(mr *mergeRequest) int { return mr.id }) {
		page(c, out, func(mr *mergeRequest) any { return s.mergeRequestJSON(mr, c.user) })
	}
}

func (s *Server) getMergeRequest(c *call, _ *project, mr *mergeRequest) {
	c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) createMergeRequest(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 30) {
		return
	}
	for _, name := range []string{"source_branch", "target_branch", "title"} {
		if strings.TrimSpace(c.str(name)) == "" {
			c.missing(name)
			return
		}
	}
	target := p
	if tid, present, ok := c.intParam("target_project_id"); !ok {
		return
	} else if present {
		if target = s.projects[tid]; target == nil || !s.canSee(c.user, target) {
			c.notFound("Project")
			return
		}
	}
	src, dst := c.str("source_branch"), c.str("target_branch")
	switch {
	case p.branches[src] == nil:
		c.failList(http.StatusBadRequest, "Source branch "+strconv.Quote(src)+" does not exist")
		return
	case target.branches[dst] == nil:
		c.failList(http.StatusBadRequest, "Target branch "+strconv.Quote(dst)+" does not exist")
		return
	case target == p && src == dst:
		c.failList(http.StatusBadRequest, "You can not use same project/branch for source and target")
		return
	}
	for _, other := range s.mergeRequests {
		if other.projectID == p.id && !other.deleted && other.isOpen() && other.sourceBranch == src && other.targetBranch == dst {
			c.conflict("Another open merge request already exists for this source branch: !" + strconv.Itoa(other.iid))
			return
		}
	}
	now := s.now()
	mr := &mergeRequest{projectID: p.id, sourceProjectID: p.id, targetProjectID: target.id, sourceBranch: src, targetBranch: dst,
		title: c.str("title"), state: "opened", createdAt: now, updatedAt: now, authorID: c.user.id,
		labels: dedupe(c.listParam("labels")), subscribers: map[int]bool{c.user.id: true}}
	c.setStr("description", &mr.description)
	if !s.issueRefs(c, p, &mr.assigneeID, &mr.milestoneID) {
		return
	}
	mr.id, mr.iid = s.newID(), s.nextMergeRequestIID(p.id)
	s.mergeRequests[mr.id] = mr
	s.ensureLabels(p.id, mr.labels)
	s.addEvent(p.id, c.user.id, actionOpened, "MergeRequest", mr.id, mr.title, 0)
	c.json(http.StatusCreated, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) updateMergeRequest(c *call, p *project, mr *mergeRequest) {
	if mr.authorID != c.user.id && !c.requireLevel(p, 30) {
		return
	}
	event := c.str("state_event")
	switch event {
	case "", "close", "reopen", "merge":
	default:
		c.invalid(map[string]any{"state_event": []string{"does not have a valid value"}})
		return
	}
	if c.has("target_branch") && p.branches[c.str("target_branch")] == nil {
		c.failList(http.StatusBadRequest, "Target branch "+strconv.Quote(c.str("target_branch"))+" does not exist")
		return
	}
	if !s.issueRefs(c, p, &mr.assigneeID, &mr.milestoneID) {
		return
	}
	c.setStr("title", &mr.title)
	c.setStr("description", &mr.description)
	c.setStr("target_branch", &mr.targetBranch)
	if c.has("labels") {
		mr.labels = dedupe(c.listParam("labels"))
		s.ensureLabels(p.id, mr.labels)
	}
	switch {
	case event == "close" && mr.state != "merged":
		mr.state = "closed"
		s.addEvent(p.id, c.user.id, actionClosed, "MergeRequest", mr.id, mr.title, 0)
	case event == "reopen" && mr.state == "closed":
		mr.state = "reopened"
		s.addEvent(p.id, c.user.id, actionOpened, "MergeRequest", mr.id, mr.title, 0)
	case event == "merge" && mr.isOpen():
		s.doMerge(mr, c.user.id)
	}
	mr.updatedAt = s.now()
	c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

// deleteMergeRequest is admin or owner only and soft; anyone else gets 404.
func (s *Server) deleteMergeRequest(c *call, p *project, mr *mergeRequest) {
	if !s.isOwner(c.user, p) {
		c.notFound("Merge Request")
		return
	}
	mr.deleted = true
	c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) mergeRequestCommits(c *call, p *project, mr *mergeRequest) {
	var out []any
	if b := p.branches[mr.sourceBranch]; b != nil {
		author := s.users[mr.authorID]
		name, email := "", ""
		if author != nil {
			name, email = author.name, author.email
		}
		out = append(out, map[string]any{"id": b.commitID, "short_id": b.commitID[:min(11, len(b.commitID))], "title": b.message,
			"author_name": name, "author_email": email, "created_at": ts(b.committedAt), "message": b.message})
	}
	all(c, out, func(v any) any { return v })
}

func (s *Server) mergeRequestChanges(c *call, _ *project, mr *mergeRequest) {
	m := s.mergeRequestJSON(mr, c.user)
	file := slug(mr.sourceBranch) + ".md"
	m["changes"] = []any{map[string]any{"old_path": file, "new_path": file, "a_mode": "100644", "b_mode": "100644",
		"diff": "--- a/" + file + "\n+++ b/" + file + "\n@@ -1 +1 @@\n-old\n+" + mr.title + "\n", "new_file": false,
		"renamed_file": false, "deleted_file": false}}
	c.json(http.StatusOK, m)
}

// acceptMergeRequest applies the notes' status codes: 401 without rights,
// 405 when not open or work in progress, 406 on conflicts, 409 on a sha
// mismatch. With merge_when_build_succeeds (either key) it waits for the
// source branch's latest build unless that build already succeeded.
func (s *Server) acceptMergeRequest(c *call, p *project, mr *mergeRequest) {
	if s.accessLevel(c.user, p) < 30 && !c.user.admin {
		c.unauthorized()
		return
	}
	if !mr.isOpen() || mr.workInProgress() {
		c.fail(http.StatusMethodNotAllowed, "405 Method Not Allowed")
		return
	}
	if mr.conflicts {
		c.fail(http.StatusNotAcceptable, "Branch cannot be merged")
		return
	}
	head := ""
	if b := p.branches[mr.sourceBranch]; b != nil {
		head = b.commitID
	}
	if c.has("sha") && c.str("sha") != head {
		c.conflict("SHA does not match HEAD of source branch: " + head)
		return
	}
	c.setStr("merge_commit_message", &mr.mergeCommitMessage)
	_, mr.shouldRemoveSourceBranch = c.form["should_remove_source_branch"] // any value removes it
	wait, _ := c.boolParam("merge_when_build_succeeds")
	if alt, ok := c.boolParam("merged_when_build_succeeds"); ok {
		wait = wait || alt
	}
	if latest := s.latestBuild(p.id, mr.sourceBranch); wait && (latest == nil || latest.status != "success") {
		mr.mergeWhenBuildSucceeds = true
		mr.updatedAt = s.now()
		c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
		return
	}
	s.doMerge(mr, c.user.id)
	c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

// doMerge merges: the state, the target branch, the optional source
// removal, the issues it closes and the event.
func (s *Server) doMerge(mr *mergeRequest, by int) {
	p := s.projects[mr.projectID]
	mr.state, mr.mergeWhenBuildSucceeds, mr.updatedAt = "merged", false, s.now()
	if p == nil {
		return
	}
	if src := p.branches[mr.sourceBranch]; src != nil {
		if t := s.projects[mr.targetProjectID]; t != nil {
			s.addBranch(t, mr.targetBranch, "")
		}
		if mr.shouldRemoveSourceBranch {
			delete(p.branches, mr.sourceBranch)
		}
	}
	for _, is := range s.closedBy(mr) {
		is.state, is.updatedAt = "closed", s.now()
	}
	s.addEvent(p.id, by, actionMerged, "MergeRequest", mr.id, mr.title, 0)
}

var closesRE = regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)`)

// closedBy lists the open issues a merge request's description closes.
func (s *Server) closedBy(mr *mergeRequest) []*issue {
	var out []*issue
	for _, m := range closesRE.FindAllStringSubmatch(mr.description, -1) {
		iid, _ := strconv.Atoi(m[1])
		for _, id := range sortedKeys(s.issues) {
			if is := s.issues[id]; is.projectID == mr.targetProjectID && is.iid == iid && !is.deleted && is.state == "opened" {
				out = append(out, is)
			}
		}
	}
	return out
}

// cancelMergeWhenBuildSucceeds: 401 without rights, 405 when merged or
// closed, 406 when the flag is not set.
func (s *Server) cancelMergeWhenBuildSucceeds(c *call, p *project, mr *mergeRequest) {
	switch {
	case s.accessLevel(c.user, p) < 30 && !c.user.admin:
		c.unauthorized()
	case !mr.isOpen():
		c.fail(http.StatusMethodNotAllowed, "405 Method Not Allowed")
	case !mr.mergeWhenBuildSucceeds:
		c.fail(http.StatusNotAcceptable, "406 Not Acceptable")
	default:
		mr.mergeWhenBuildSucceeds, mr.updatedAt = false, s.now()
		c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
	}
}

func (s *Server) closesIssues(c *call, _ *project, mr *mergeRequest) {
	page(c, s.closedBy(mr), func(is *issue) any { return s.issueJSON(is, c.user, true) })
}

func (s *Server) subscribeMergeRequest(on bool) func(*call, *project, *mergeRequest) {
	return func(c *call, _ *project, mr *mergeRequest) {
		c.toggleCaller(mr.subscribers, on, func() any { return s.mergeRequestJSON(mr, c.user) })
	}
}
