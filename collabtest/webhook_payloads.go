package collabtest

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Webhook payloads, built from the fake's records with the keys and JSON
// types deployed 8.9 servers send. Builders run with s.mu held.

// hookKind is an event kind a hook's flags select.
type hookKind int

const (
	pushHook hookKind = iota
	tagPushHook
	issueHook
	mergeRequestHook
	noteHook
	buildHook
)

// hookEventNames are the X-Gitlab-Event values, by kind.
var hookEventNames = [...]string{
	pushHook: "Push Hook", tagPushHook: "Tag Push Hook", issueHook: "Issue Hook",
	mergeRequestHook: "Merge Request Hook", noteHook: "Note Hook", buildHook: "Build Hook",
}

// wants reports whether the hook's flags select kind.
func (h *hook) wants(kind hookKind) bool {
	return [...]bool{
		pushHook: h.pushEvents, tagPushHook: h.tagPushEvents, issueHook: h.issuesEvents,
		mergeRequestHook: h.mergeRequestsEvents, noteHook: h.noteEvents, buildHook: h.buildEvents,
	}[kind]
}

// hookJobs makes a job for every hook of the project that selects kind, in
// hook id order, building and encoding the payload once, only if needed.
func (s *Server) hookJobs(projectID int, kind hookKind, payload func() any) []hookJob {
	var jobs []hookJob
	var body []byte
	for _, id := range sortedKeys(s.hooks) {
		h := s.hooks[id]
		if h.projectID != projectID || !h.wants(kind) {
			continue
		}
		if body == nil {
			var err error
			if body, err = json.Marshal(payload()); err != nil {
				panic("collabtest: webhook payload: " + err.Error()) // payloads are maps of plain values
			}
		}
		jobs = append(jobs, hookJob{hookID: h.id, projectID: projectID, url: h.url, event: hookEventNames[kind], body: body,
			verifyTLS: h.enableSSLVerification})
	}
	return jobs
}

// zeroSHA stands for "no commit" in push and build payloads.
const zeroSHA = "0000000000000000000000000000000000000000"

// commitZone is the committer offset of seeded commits, so that commit
// timestamps carry a numeric offset as real committer dates usually do.
var commitZone = time.FixedZone("", 2*60*60)

// dbTime renders a database timestamp as payloads carry it, or null.
func dbTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format("2006-01-02 15:04:05 MST")
}

// commitTime renders a committer date: RFC 3339 with a numeric offset.
func commitTime(t time.Time) string { return t.In(commitZone).Format("2006-01-02T15:04:05-07:00") }

// intOrNil renders an id of 0 as null.
func intOrNil(id int) any {
	if id == 0 {
		return nil
	}
	return id
}

// hookUser is the user object of payloads (actor, assignee).
func hookUser(u *user) map[string]any {
	if u == nil {
		return map[string]any{"name": nil, "username": nil, "avatar_url": nil}
	}
	return map[string]any{"name": u.name, "username": u.username, "avatar_url": nil}
}

func (s *Server) projectWebURL(p *project) string { return s.URL + "/" + s.projectFullPath(p) }

func (s *Server) projectSSHURL(p *project) string {
	host := s.URL[strings.Index(s.URL, "://")+3:]
	return "git@" + host + ":" + s.projectFullPath(p) + ".git"
}

// hookProject is the project object of payloads, with its deprecated copies.
func (s *Server) hookProject(p *project) map[string]any {
	if p == nil {
		return nil
	}
	web, ssh := s.projectWebURL(p), s.projectSSHURL(p)
	var defaultBranch any
	if len(p.branches) > 0 {
		defaultBranch = p.defaultBranch
	}
	return map[string]any{
		"name": p.name, "description": orNil(p.description), "web_url": web, "avatar_url": nil,
		"git_ssh_url": ssh, "git_http_url": web + ".git", "namespace": s.namespaceName(p),
		"visibility_level": p.visibility, "path_with_namespace": s.projectFullPath(p), "default_branch": defaultBranch,
		"homepage": web, "url": ssh, "ssh_url": ssh, "http_url": web + ".git",
	}
}

// hookRepository is the deprecated repository object: the short variant
// (issue, merge request, note) or the long one (push, build).
func (s *Server) hookRepository(p *project, long bool) map[string]any {
	web, ssh := s.projectWebURL(p), s.projectSSHURL(p)
	m := map[string]any{"name": p.name, "url": ssh, "description": orNil(p.description), "homepage": web}
	if long {
		m["git_http_url"], m["git_ssh_url"], m["visibility_level"] = web+".git", ssh, p.visibility
	}
	return m
}

// hookCommit is a commit object without file lists.
func (s *Server) hookCommit(p *project, id, message, authorName, authorEmail string, at time.Time) map[string]any {
	return map[string]any{
		"id": id, "message": message, "timestamp": commitTime(at), "url": s.projectWebURL(p) + "/commit/" + id,
		"author": map[string]any{"name": authorName, "email": authorEmail},
	}
}

// issueColumns is the issue row as payloads dump it.
func (s *Server) issueColumns(is *issue) map[string]any {
	return map[string]any{
		"id": is.id, "iid": is.iid, "title": is.title, "description": orNil(is.description), "state": is.state,
		"project_id": is.projectID, "author_id": is.authorID, "assignee_id": intOrNil(is.assigneeID),
		"milestone_id": intOrNil(is.milestoneID), "updated_by_id": nil, "position": 0, "branch_name": nil,
		"confidential": false, "due_date": orNil(is.dueDate), "moved_to_id": nil, "deleted_at": nil,
		"created_at": dbTime(is.createdAt), "updated_at": dbTime(is.updatedAt),
	}
}

func (s *Server) issueURL(is *issue) string {
	return s.projectWebURL(s.projects[is.projectID]) + "/issues/" + strconv.Itoa(is.iid)
}

// issuePayload is an Issue Hook body; action is open, update, close or reopen.
func (s *Server) issuePayload(is *issue, actorID int, action string) map[string]any {
	attrs := s.issueColumns(is)
	attrs["url"], attrs["action"] = s.issueURL(is), action
	return s.issuablePayload("issue", s.projects[is.projectID], actorID, is.assigneeID, attrs)
}

// issuablePayload is the body of an issue or merge request event of the
// given object_kind, in project p, with attrs as its object_attributes.
func (s *Server) issuablePayload(kind string, p *project, actorID, assigneeID int, attrs map[string]any) map[string]any {
	m := map[string]any{
		"object_kind": kind, "user": hookUser(s.users[actorID]), "project": s.hookProject(p),
		"repository": s.hookRepository(p, false), "object_attributes": attrs,
	}
	if a := s.users[assigneeID]; a != nil {
		m["assignee"] = hookUser(a)
	}
	return m
}

// mergeRequestColumns is the merge request row plus source, target,
// last_commit and work_in_progress, as payloads carry it.
func (s *Server) mergeRequestColumns(mr *mergeRequest) map[string]any {
	src, dst := s.projects[mr.sourceProjectID], s.projects[mr.targetProjectID]
	status := "can_be_merged"
	if mr.conflicts {
		status = "cannot_be_merged"
	}
	params := map[string]any{}
	if mr.shouldRemoveSourceBranch {
		params["should_remove_source_branch"] = "1"
	}
	var lastCommit any
	if src != nil {
		if b := src.branches[mr.sourceBranch]; b != nil {
			lastCommit = s.hookCommit(src, b.commitID, b.message, b.authorName, b.authorEmail, b.committedAt)
		}
	}
	var source any
	if src != nil {
		source = s.hookProject(src)
	}
	return map[string]any{
		"id": mr.id, "iid": mr.iid, "title": mr.title, "description": orNil(mr.description), "state": mr.state,
		"merge_status": status, "source_branch": mr.sourceBranch, "target_branch": mr.targetBranch,
		"source_project_id": mr.sourceProjectID, "target_project_id": mr.targetProjectID, "author_id": mr.authorID,
		"assignee_id": intOrNil(mr.assigneeID), "milestone_id": intOrNil(mr.milestoneID), "updated_by_id": nil,
		"position": 0, "locked_at": nil, "merge_error": nil, "merge_params": params,
		"merge_when_build_succeeds": mr.mergeWhenBuildSucceeds, "merge_user_id": nil, "merge_commit_sha": nil,
		"deleted_at": nil, "created_at": dbTime(mr.createdAt), "updated_at": dbTime(mr.updatedAt),
		"source": source, "target": s.hookProject(dst), "last_commit": lastCommit, "work_in_progress": mr.workInProgress(),
	}
}

func (s *Server) mergeRequestURL(mr *mergeRequest) string {
	return s.projectWebURL(s.projects[mr.projectID]) + "/merge_requests/" + strconv.Itoa(mr.iid)
}

// mergeRequestPayload is a Merge Request Hook body; action is open,
// update, close, reopen or merge.
func (s *Server) mergeRequestPayload(mr *mergeRequest, actorID int, action string) map[string]any {
	attrs := s.mergeRequestColumns(mr)
	attrs["url"], attrs["action"] = s.mergeRequestURL(mr), action
	return s.issuablePayload("merge_request", s.projects[mr.targetProjectID], actorID, mr.assigneeID, attrs)
}

// notePayload is a Note Hook body for a comment on an issue or a merge
// request, with the noteable as the sibling object.
func (s *Server) notePayload(n *note) map[string]any {
	p := s.projects[n.projectID]
	attrs := map[string]any{
		"id": n.id, "note": n.body, "noteable_type": n.noteableType, "noteable_id": n.noteableID, "commit_id": nil,
		"author_id": n.authorID, "project_id": n.projectID, "updated_by_id": nil, "line_code": nil,
		"attachment": orNil(n.attachment), "system": false, "st_diff": nil, "type": nil,
		"created_at": dbTime(n.createdAt), "updated_at": dbTime(n.updatedAt),
	}
	m := map[string]any{
		"object_kind": "note", "user": hookUser(s.users[n.authorID]), "project_id": n.projectID,
		"project": s.hookProject(p), "repository": s.hookRepository(p, false), "object_attributes": attrs,
	}
	anchor := "#note_" + strconv.Itoa(n.id)
	switch n.noteableType {
	case "Issue":
		if is := s.issues[n.noteableID]; is != nil {
			m["issue"], attrs["url"] = s.issueColumns(is), s.issueURL(is)+anchor
		}
	case "MergeRequest":
		if mr := s.mergeRequests[n.noteableID]; mr != nil {
			m["merge_request"], attrs["url"] = s.mergeRequestColumns(mr), s.mergeRequestURL(mr)+anchor
		}
	}
	return m
}

// buildPayload is a Build Hook body: flat, with the build's pipeline as
// "commit".
func (s *Server) buildPayload(b *build) map[string]any {
	p := s.projects[b.projectID]
	before := b.beforeSHA
	if before == "" {
		before = zeroSHA
	}
	var duration any
	if !b.startedAt.IsZero() {
		end := b.finishedAt
		if end.IsZero() {
			end = s.now()
		}
		duration = end.Sub(b.startedAt).Seconds()
	}
	u := map[string]any{"id": nil, "name": nil, "email": nil}
	if usr := s.users[b.userID]; usr != nil {
		u = map[string]any{"id": usr.id, "name": usr.name, "email": usr.email}
	}
	return map[string]any{
		"object_kind": "build", "ref": b.ref, "tag": b.tag, "before_sha": before, "sha": b.commitID,
		"build_id": b.id, "build_name": b.name, "build_stage": b.stage, "build_status": b.status,
		"build_started_at": dbTime(b.startedAt), "build_finished_at": dbTime(b.finishedAt), "build_duration": duration,
		"build_allow_failure": false, "project_id": b.projectID, "project_name": s.namespaceName(p) + " / " + p.name,
		"user": u, "commit": s.pipelinePayload(b), "repository": s.hookRepository(p, true),
	}
}

// pipelinePayload stands in for the pipeline of a build: the fake has no
// pipelines, so the builds of the same project and commit form one, whose id
// is the lowest of their build ids. As on deployed servers, a retried build
// no longer counts: the status is that of the latest build of each name.
func (s *Server) pipelinePayload(b *build) map[string]any {
	id := b.id
	latest := map[string]*build{}
	for _, o := range s.builds {
		if o.projectID == b.projectID && o.commitID == b.commitID {
			id = min(id, o.id)
			if l := latest[o.name]; l == nil || o.id > l.id {
				latest[o.name] = o
			}
		}
	}
	var started, finished time.Time
	counts := map[string]int{}
	for _, o := range latest {
		counts[o.status]++
		if !o.startedAt.IsZero() && (started.IsZero() || o.startedAt.Before(started)) {
			started = o.startedAt
		}
		if o.finishedAt.After(finished) {
			finished = o.finishedAt
		}
	}
	status := pipelineStatus(counts, len(latest))
	var duration any
	if !buildFinished(status) {
		finished = time.Time{}
	} else if !started.IsZero() {
		duration = int(finished.Sub(started).Seconds())
	}
	name, email := "", ""
	if u := s.users[b.userID]; u != nil {
		name, email = u.name, u.email
	}
	return map[string]any{
		"id": id, "sha": b.commitID, "message": orNil(b.commitMessage), "author_name": orNil(name),
		"author_email": orNil(email), "status": status, "duration": duration,
		"started_at": dbTime(started), "finished_at": dbTime(finished),
	}
}

// pipelineStatus sums up build statuses as a pipeline does.
func pipelineStatus(counts map[string]int, total int) string {
	switch {
	case counts["pending"]+counts["skipped"] == total && counts["pending"] > 0:
		return "pending"
	case counts["running"] > 0 || counts["pending"] > 0:
		return "running"
	case counts["failed"] > 0:
		return "failed"
	case counts["canceled"] > 0:
		return "canceled"
	case counts["success"] > 0:
		return "success"
	}
	return "skipped"
}

// pushedCommit is a commit of a seeded push, with its id and date.
type pushedCommit struct {
	PushCommit
	id string
	at time.Time
}

// pushData is the push object of project events and Push Hook bodies:
// at most the last 20 commits, oldest first, and the full count.
func (s *Server) pushData(p *project, pusher *user, branch, before, after string, commits []pushedCommit) map[string]any {
	list := []any{}
	for _, c := range commits[max(0, len(commits)-20):] {
		m := s.hookCommit(p, c.id, c.Message, c.AuthorName, c.AuthorEmail, c.at)
		m["added"], m["modified"], m["removed"] = nonNil(c.Added), nonNil(c.Modified), nonNil(c.Removed)
		list = append(list, m)
	}
	var checkout any
	if after != zeroSHA {
		checkout = after
	}
	m := map[string]any{
		"object_kind": "push", "event_name": "push", "before": before, "after": after, "ref": "refs/heads/" + branch,
		"checkout_sha": checkout, "message": nil, "user_id": nil, "user_name": nil, "user_email": nil, "user_avatar": nil,
		"project_id": p.id, "project": s.hookProject(p), "commits": list, "total_commits_count": len(commits),
		"repository": s.hookRepository(p, true),
	}
	if pusher != nil {
		m["user_id"], m["user_name"], m["user_email"] = pusher.id, pusher.name, pusher.email
	}
	return m
}

// nonNil renders a nil list of paths as [].
func nonNil(paths []string) []string {
	if paths == nil {
		return []string{}
	}
	return paths
}
