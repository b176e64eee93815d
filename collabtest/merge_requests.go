package collabtest

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// mergeRequest is a merge request: the common ticket (state opened,
// closed, merged or reopened) and its branches.
type mergeRequest struct {
	ticket
	sourceProjectID, targetProjectID int
	sourceBranch, targetBranch       string
	mergeWhenBuildSucceeds           bool
	shouldRemoveSourceBranch         bool
	mergeCommitMessage               string
	conflicts                        bool // seeded by a helper
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

// AddMergeRequest seeds an open merge request between two branches of a
// project and returns its id. An unknown project or author, or a blank
// branch or title, is a mistake (see Err) and returns 0.
//
// Deprecated: Use Seed.MergeRequest, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddMergeRequest(projectID, authorID int, source, target, title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[projectID] == nil || s.users[authorID] == nil || source == "" || target == "" || title == "" {
		s.misuse("AddMergeRequest: no project %d, no user %d, or a blank branch or title", projectID, authorID)
		return 0
	}
	mr := &mergeRequest{ticket: s.newTicket("MergeRequest", projectID, authorID, title),
		sourceProjectID: projectID, targetProjectID: projectID, sourceBranch: source, targetBranch: target}
	insertTicket(s, s.mergeRequests, mr, authorID, s.emitMergeRequest)
	return mr.id
}

// SetMergeConflict makes a merge request conflict (or not) with its
// target. An unknown merge request is a mistake (see Err).
func (s *Server) SetMergeConflict(mergeRequestID int, conflicts bool) {
	seedChange(s, "SetMergeConflict", "merge request", s.mergeRequests, mergeRequestID, func(mr *mergeRequest) { mr.conflicts = conflicts })
}

// isOpen covers the two open states.
func (mr *mergeRequest) isOpen() bool { return mr.state == "opened" || mr.state == "reopened" }

func (s *Server) mergeRequestRoutes() {
	base := "/projects/{id}/merge_requests"
	s.api("GET "+base, rule{}, s.listMergeRequests)
	s.api("POST "+base, rule{level: levelDeveloper}, s.createMergeRequest)
	s.api("DELETE "+base+"/{mr_id}", rule{}, s.deleteTicket)
	s.mergeRequestItemRoutes(base + "/{mr_id}")
}

// mergeRequestItemRoutes registers the routes on one merge request at item,
// which deployed servers serve under both /merge_requests/{mr_id} and the
// deprecated /merge_request/{mr_id}.
func (s *Server) mergeRequestItemRoutes(item string) {
	s.api("GET "+item, rule{}, s.getMergeRequest)
	s.api("PUT "+item, rule{}, s.updateMergeRequest)
	s.api("GET "+item+"/commits", rule{}, s.mergeRequestCommits)
	s.api("GET "+item+"/changes", rule{}, s.mergeRequestChanges)
	s.api("PUT "+item+"/merge", rule{}, s.acceptMergeRequest)
	s.api("PUT "+item+"/cancel_merge_when_build_succeeds", rule{}, s.cancelMergeWhenBuildSucceeds)
	s.api("POST "+item+"/cancel_merge_when_build_succeeds", rule{}, s.cancelMergeWhenBuildSucceeds)
	s.api("GET "+item+"/closes_issues", rule{}, s.closesIssues)
	s.api("POST "+item+"/subscription", rule{}, s.subscribe(true))
	s.api("DELETE "+item+"/subscription", rule{}, s.subscribe(false))
}

// deprecatedMergeRequestRoutes registers what deployed servers mark "will
// be removed in 9.0" and still serve, for the clients that use it: every
// merge request route under the singular /merge_request/{mr_id}, and the
// comments routes, which show a note as {note, author}.
func (s *Server) deprecatedMergeRequestRoutes() {
	singular := "/projects/{id}/merge_request/{mr_id}"
	s.mergeRequestItemRoutes(singular)
	for _, item := range []string{"/projects/{id}/merge_requests/{mr_id}", singular} {
		s.api("GET "+item+"/comments", rule{}, s.listComments)
		s.api("POST "+item+"/comments", rule{}, s.createNoteFrom("note", s.commentJSON))
	}
}

// loadMergeRequest resolves {mr_id} within the project: "404 Merge Request Not Found".
func (c *call) loadMergeRequest() error {
	return loadTicket(c, "mr_id", "Merge Request", c.s.mergeRequests, &c.mr)
}

func (mr *mergeRequest) workInProgress() bool {
	t := strings.ToLower(mr.title)
	return strings.HasPrefix(t, "wip:") || strings.HasPrefix(t, "[wip]")
}

// mergeRequestJSON renders a merge request for caller u; only the changes
// answer carries its changes.
func (s *Server) mergeRequestJSON(mr *mergeRequest, u *user) any {
	return reply(s.mergeRequestRecord(mr, u), append(ticketOmit, "changes")...)
}

func (s *Server) listMergeRequests(c *call) error {
	p := c.project
	iid, hasIID, err := c.intParam("iid")
	if err != nil {
		return err
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
			return errInvalid("state", "does not have a valid value")
		}
		out = append(out, mr)
	}
	if err := orderByTime(c, out, func(mr *mergeRequest) time.Time { return mr.createdAt },
		func(mr *mergeRequest) time.Time { return mr.updatedAt }, func(mr *mergeRequest) int { return mr.id }); err != nil {
		return err
	}
	return page(c, out, func(mr *mergeRequest) any { return s.mergeRequestJSON(mr, c.user) })
}

func (s *Server) getMergeRequest(c *call) error {
	return c.json(http.StatusOK, s.mergeRequestJSON(c.mr, c.user))
}

func (s *Server) createMergeRequest(c *call) error {
	p := c.project
	for _, name := range []string{"source_branch", "target_branch"} {
		if strings.TrimSpace(c.str(name)) == "" {
			return errMissing(name)
		}
	}
	title, _, err := c.nameParam("title", "title", true)
	if err != nil {
		return err
	}
	target := p
	if tid, present, err := c.intParam("target_project_id"); err != nil {
		return err
	} else if present {
		if target = s.projects[tid]; target == nil || !s.canSee(c.user, target) {
			return errNotFound("Project")
		}
	}
	src, dst := c.str("source_branch"), c.str("target_branch")
	switch {
	case p.branches[src] == nil:
		return errList(http.StatusBadRequest, "Source branch "+strconv.Quote(src)+" does not exist")
	case target.branches[dst] == nil:
		return errList(http.StatusBadRequest, "Target branch "+strconv.Quote(dst)+" does not exist")
	case target == p && src == dst:
		return errList(http.StatusBadRequest, "You can not use same project/branch for source and target")
	}
	for _, other := range s.mergeRequests {
		if other.projectID == p.id && !other.deleted && other.isOpen() && other.sourceBranch == src && other.targetBranch == dst {
			return errConflict("Another open merge request already exists for this source branch: !" + strconv.Itoa(other.iid))
		}
	}
	mr := &mergeRequest{ticket: s.newTicket("MergeRequest", p.id, c.user.id, title),
		sourceProjectID: p.id, targetProjectID: target.id, sourceBranch: src, targetBranch: dst}
	if err := s.ticketParams(c, &mr.ticket); err != nil {
		return err
	}
	insertTicket(s, s.mergeRequests, mr, c.user.id, s.emitMergeRequest)
	return c.json(http.StatusCreated, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) updateMergeRequest(c *call) error {
	p, mr := c.project, c.mr
	if mr.authorID != c.user.id && !c.user.admin && s.accessLevel(c.user, p) < levelDeveloper {
		return errForbidden
	}
	event := c.str("state_event")
	switch event {
	case "", "close", "reopen", "merge":
	default:
		return errInvalid("state_event", "does not have a valid value")
	}
	if c.has("target_branch") && p.branches[c.str("target_branch")] == nil {
		return errList(http.StatusBadRequest, "Target branch "+strconv.Quote(c.str("target_branch"))+" does not exist")
	}
	if err := s.ticketParams(c, &mr.ticket); err != nil {
		return err
	}
	c.setStr("target_branch", &mr.targetBranch)
	switch {
	case event == "close" && mr.state != "merged":
		s.setTicketState(&mr.ticket, "closed", c.user.id)
	case event == "reopen" && mr.state == "closed":
		s.setTicketState(&mr.ticket, "reopened", c.user.id)
	case event == "merge" && mr.isOpen():
		s.doMerge(mr, c.user.id)
	}
	mr.updatedAt = s.now()
	if c.ticketEdited() {
		s.emitMergeRequest(mr, c.user.id, "update")
	}
	return c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) mergeRequestCommits(c *call) error {
	return all(c, s.mergeRequestCommitRecords(c.project, c.mr), func(r *collab.MergeRequestCommit) any { return reply(r) })
}

// mergeRequestCommitRecords are the commits of mr in project p: the head of
// its source branch, if the branch is there, written by the author.
func (s *Server) mergeRequestCommitRecords(p *project, mr *mergeRequest) []*collab.MergeRequestCommit {
	b := p.branches[mr.sourceBranch]
	if b == nil {
		return nil
	}
	rec := &collab.MergeRequestCommit{ID: b.commitID, ShortID: b.commitID[:min(11, len(b.commitID))], Title: b.message,
		CreatedAt: apiTime(b.committedAt), Message: b.message}
	if author := s.users[mr.authorID]; author != nil {
		rec.AuthorName, rec.AuthorEmail = author.name, author.email
	}
	return []*collab.MergeRequestCommit{rec}
}

func (s *Server) mergeRequestChanges(c *call) error {
	mr := c.mr
	rec := s.mergeRequestRecord(mr, c.user)
	file := slug(mr.sourceBranch) + ".md"
	rec.Changes = []*collab.Change{{OldPath: file, NewPath: file, AMode: "100644", BMode: "100644",
		Diff: "--- a/" + file + "\n+++ b/" + file + "\n@@ -1 +1 @@\n-old\n+" + mr.title + "\n"}}
	return c.json(http.StatusOK, reply(rec, ticketOmit...))
}

// acceptMergeRequest answers as deployed servers do: 401 without rights,
// 405 when not open or work in progress, 406 on conflicts, 409 on a sha
// mismatch. With merge_when_build_succeeds (either key) it waits for the
// source branch's latest build unless that build already succeeded.
func (s *Server) acceptMergeRequest(c *call) error {
	p, mr := c.project, c.mr
	if s.accessLevel(c.user, p) < levelDeveloper && !c.user.admin {
		return errUnauthorized
	}
	if !mr.isOpen() || mr.workInProgress() {
		return errStatus(http.StatusMethodNotAllowed, "405 Method Not Allowed")
	}
	if mr.conflicts {
		return errStatus(http.StatusNotAcceptable, "Branch cannot be merged")
	}
	head := ""
	if b := p.branches[mr.sourceBranch]; b != nil {
		head = b.commitID
	}
	if c.has("sha") && c.str("sha") != head {
		return errConflict("SHA does not match HEAD of source branch: " + head)
	}
	c.setStr("merge_commit_message", &mr.mergeCommitMessage)
	mr.shouldRemoveSourceBranch = c.has("should_remove_source_branch") // any value removes it
	wait, _ := c.boolParam("merge_when_build_succeeds")
	if alt, ok := c.boolParam("merged_when_build_succeeds"); ok {
		wait = wait || alt
	}
	if latest := s.latestBuild(p.id, mr.sourceBranch); wait && (latest == nil || latest.status != "success") {
		mr.mergeWhenBuildSucceeds = true
		mr.updatedAt = s.now()
		return c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
	}
	s.doMerge(mr, c.user.id)
	return c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
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
		s.setTicketState(&is.ticket, "closed", by)
	}
	s.addEvent(p.id, by, actionMerged, "MergeRequest", mr.id, mr.title, 0)
	s.emitMergeRequest(mr, by, "merge")
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
func (s *Server) cancelMergeWhenBuildSucceeds(c *call) error {
	mr := c.mr
	switch {
	case s.accessLevel(c.user, c.project) < levelDeveloper && !c.user.admin:
		return errUnauthorized
	case !mr.isOpen():
		return errStatus(http.StatusMethodNotAllowed, "405 Method Not Allowed")
	case !mr.mergeWhenBuildSucceeds:
		return errStatus(http.StatusNotAcceptable, "406 Not Acceptable")
	}
	mr.mergeWhenBuildSucceeds, mr.updatedAt = false, s.now()
	return c.json(http.StatusOK, s.mergeRequestJSON(mr, c.user))
}

func (s *Server) closesIssues(c *call) error {
	return page(c, s.closedBy(c.mr), func(is *issue) any { return s.issueJSON(is, c.user, true) })
}
