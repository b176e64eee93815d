package collabtest

import (
	"cmp"
	"encoding/json"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/hookpayload"
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
	pushHook: hookpayload.EventPush, tagPushHook: hookpayload.EventTagPush, issueHook: hookpayload.EventIssue,
	mergeRequestHook: hookpayload.EventMergeRequest, noteHook: hookpayload.EventNote, buildHook: hookpayload.EventBuild,
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
				// Payloads are plain values; should one ever fail to
				// encode, the fake sends nothing rather than stop.
				if s.log != nil {
					s.log.Error("collabtest: a webhook payload does not encode", "kind", hookEventNames[kind], "error", err)
				}
				return nil
			}
		}
		jobs = append(jobs, hookJob{hookID: h.id, projectID: projectID, url: h.url, event: hookEventNames[kind], body: body,
			verifyTLS: h.enableSSLVerification})
	}
	return jobs
}

// commitZone is the committer offset of seeded commits, so that commit
// timestamps carry a numeric offset as real committer dates usually do.
var commitZone = time.FixedZone("", 2*60*60)

// hookUser is the user object of payloads (actor, assignee).
func hookUser(u *user) *hookpayload.User {
	if u == nil {
		return &hookpayload.User{}
	}
	return &hookpayload.User{Name: hookpayload.Ptr(u.name), Username: hookpayload.Ptr(u.username)}
}

func (s *Server) projectWebURL(p *project) string { return s.URL + "/" + s.projectFullPath(p) }

func (s *Server) projectSSHURL(p *project) string {
	host := s.URL[strings.Index(s.URL, "://")+3:]
	return "git@" + host + ":" + s.projectFullPath(p) + ".git"
}

// hookProjectInfo is what payloads tell of p.
func (s *Server) hookProjectInfo(p *project) hookpayload.ProjectInfo {
	web := s.projectWebURL(p)
	info := hookpayload.ProjectInfo{
		Name: p.name, Description: p.description, WebURL: web, SSHURL: s.projectSSHURL(p), HTTPURL: web + ".git",
		Namespace: s.namespaceName(p), PathWithNamespace: s.projectFullPath(p), VisibilityLevel: p.visibility,
	}
	if len(p.branches) > 0 {
		info.DefaultBranch = p.defaultBranch
	}
	return info
}

// hookProject is the project object of payloads, nil for a missing project.
func (s *Server) hookProject(p *project) *hookpayload.Project {
	if p == nil {
		return nil
	}
	return s.hookProjectInfo(p).Project()
}

// hookCommit is a commit object without file lists.
func (s *Server) hookCommit(p *project, id, message, authorName, authorEmail string, at time.Time) hookpayload.Commit {
	return hookpayload.Commit{
		ID: id, Message: message, Timestamp: hookpayload.CommitTime(at.In(commitZone)), URL: s.projectWebURL(p) + "/commit/" + id,
		Author: hookpayload.CommitAuthor{Name: authorName, Email: authorEmail},
	}
}

// issueColumns is the issue row as payloads dump it.
func (s *Server) issueColumns(is *issue) *hookpayload.Issue {
	due, _ := time.Parse(time.DateOnly, is.dueDate) // validated on input; "" is null
	return &hookpayload.Issue{
		ID: is.id, IID: is.iid, Title: is.title, Description: hookpayload.Str(is.description), State: is.state,
		ProjectID: is.projectID, AuthorID: is.authorID, AssigneeID: hookpayload.ID(is.assigneeID),
		MilestoneID: hookpayload.ID(is.milestoneID), DueDate: hookpayload.Date(due),
		CreatedAt: hookpayload.Time(is.createdAt), UpdatedAt: hookpayload.Time(is.updatedAt),
	}
}

// ticketURL is the web page of an issue or merge request.
func (s *Server) ticketURL(t *ticket) string {
	web := s.projectWebURL(s.projects[t.projectID])
	if t.kind == "Issue" {
		return hookpayload.IssueURL(web, t.iid)
	}
	return hookpayload.MergeRequestURL(web, t.iid)
}

// issuePayload is an Issue Hook body; action is open, update, close or reopen.
func (s *Server) issuePayload(is *issue, actorID int, action string) any {
	attrs := s.issueColumns(is)
	attrs.URL, attrs.Action = s.ticketURL(&is.ticket), action
	return issuable(s, "issue", s.projects[is.projectID], actorID, attrs, is.assigneeID)
}

// issuable is the body of an issue or merge request event in project p,
// attrs its object_attributes.
func issuable[A any](s *Server, kind string, p *project, actorID int, attrs A, assigneeID int) any {
	return &hookpayload.Issuable[A]{
		ObjectKind: kind, User: hookUser(s.users[actorID]), Project: s.hookProject(p),
		Repository: s.hookProjectInfo(p).Repository(), ObjectAttributes: attrs, Assignee: s.assignee(assigneeID),
	}
}

// assignee is the assignee object of an issue or merge request event: nil,
// so absent, without one.
func (s *Server) assignee(id int) *hookpayload.User {
	if a := s.users[id]; a != nil {
		return hookUser(a)
	}
	return nil
}

// mergeRequestColumns is the merge request row plus source, target,
// last_commit and work_in_progress, as payloads carry it.
func (s *Server) mergeRequestColumns(mr *mergeRequest) *hookpayload.MergeRequest {
	src, dst := s.projects[mr.sourceProjectID], s.projects[mr.targetProjectID]
	status := "can_be_merged"
	if mr.conflicts {
		status = "cannot_be_merged"
	}
	params := map[string]string{}
	if mr.shouldRemoveSourceBranch {
		params["should_remove_source_branch"] = "1"
	}
	var lastCommit *hookpayload.Commit
	if src != nil {
		if b := src.branches[mr.sourceBranch]; b != nil {
			c := s.hookCommit(src, b.commitID, b.message, b.authorName, b.authorEmail, b.committedAt)
			lastCommit = &c
		}
	}
	return &hookpayload.MergeRequest{
		ID: mr.id, IID: mr.iid, Title: mr.title, Description: hookpayload.Str(mr.description), State: mr.state,
		MergeStatus: status, SourceBranch: mr.sourceBranch, TargetBranch: mr.targetBranch,
		SourceProjectID: mr.sourceProjectID, TargetProjectID: mr.targetProjectID, AuthorID: mr.authorID,
		AssigneeID: hookpayload.ID(mr.assigneeID), MilestoneID: hookpayload.ID(mr.milestoneID), MergeParams: params,
		MergeWhenBuildSucceeds: mr.mergeWhenBuildSucceeds, CreatedAt: hookpayload.Time(mr.createdAt),
		UpdatedAt: hookpayload.Time(mr.updatedAt), Source: s.hookProject(src), Target: s.hookProject(dst),
		LastCommit: lastCommit, WorkInProgress: mr.workInProgress(),
	}
}

// mergeRequestPayload is a Merge Request Hook body; action is open,
// update, close, reopen or merge.
func (s *Server) mergeRequestPayload(mr *mergeRequest, actorID int, action string) any {
	attrs := s.mergeRequestColumns(mr)
	attrs.URL, attrs.Action = s.ticketURL(&mr.ticket), action
	return issuable(s, "merge_request", s.projects[mr.targetProjectID], actorID, attrs, mr.assigneeID)
}

// notePayload is a Note Hook body for a comment on an issue or a merge
// request, with the noteable as the sibling object.
func (s *Server) notePayload(n *note) any {
	p := s.projects[n.projectID]
	attrs := &hookpayload.NoteAttributes{
		ID: n.id, Note: n.body, NoteableType: n.noteableType, NoteableID: hookpayload.ID(n.noteableID),
		AuthorID: n.authorID, ProjectID: n.projectID, Attachment: hookpayload.Str(n.attachment),
		CreatedAt: hookpayload.Time(n.createdAt), UpdatedAt: hookpayload.Time(n.updatedAt),
	}
	m := &hookpayload.Note{
		ObjectKind: "note", User: hookUser(s.users[n.authorID]), ProjectID: n.projectID,
		Project: s.hookProject(p), Repository: s.hookProjectInfo(p).Repository(), ObjectAttributes: attrs,
	}
	switch n.noteableType {
	case "Issue":
		if is := s.issues[n.noteableID]; is != nil {
			m.Issue, attrs.URL = s.issueColumns(is), hookpayload.NoteURL(s.ticketURL(&is.ticket), n.id)
		}
	case "MergeRequest":
		if mr := s.mergeRequests[n.noteableID]; mr != nil {
			m.MergeRequest, attrs.URL = s.mergeRequestColumns(mr), hookpayload.NoteURL(s.ticketURL(&mr.ticket), n.id)
		}
	}
	return m
}

// buildPayload is a Build Hook body: flat, with the build's pipeline as
// "commit".
func (s *Server) buildPayload(b *build) any {
	p := s.projects[b.projectID]
	var duration *float64
	if !b.startedAt.IsZero() {
		end := b.finishedAt
		if end.IsZero() {
			end = s.now()
		}
		d := end.Sub(b.startedAt).Seconds()
		duration = &d
	}
	var u hookpayload.BuildUser
	if usr := s.users[b.userID]; usr != nil {
		u = hookpayload.BuildUser{ID: hookpayload.Ptr(usr.id), Name: hookpayload.Ptr(usr.name), Email: hookpayload.Ptr(usr.email)}
	}
	return &hookpayload.Build{
		ObjectKind: "build", Ref: b.ref, Tag: b.tag, BeforeSHA: cmp.Or(b.beforeSHA, hookpayload.ZeroSHA), SHA: b.commitID,
		BuildID: b.id, BuildName: b.name, BuildStage: b.stage, BuildStatus: b.status,
		BuildStartedAt: hookpayload.Time(b.startedAt), BuildFinishedAt: hookpayload.Time(b.finishedAt), BuildDuration: duration,
		ProjectID: b.projectID, ProjectName: s.namespaceName(p) + " / " + p.name,
		User: u, Commit: s.pipelinePayload(b), Repository: s.hookProjectInfo(p).LongRepository(),
	}
}

// pipelinePayload stands in for the pipeline of a build: the fake has no
// pipelines, so the builds of the same project and commit form one, whose id
// is the lowest of their build ids. As on deployed servers, a retried build
// no longer counts: the status is that of the latest build of each name.
func (s *Server) pipelinePayload(b *build) *hookpayload.Pipeline {
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
	var duration *int
	if !buildFinished(status) {
		finished = time.Time{}
	} else if !started.IsZero() {
		d := int(finished.Sub(started).Seconds())
		duration = &d
	}
	name, email := "", ""
	if u := s.users[b.userID]; u != nil {
		name, email = u.name, u.email
	}
	return &hookpayload.Pipeline{
		ID: id, SHA: b.commitID, Message: hookpayload.Str(b.commitMessage), AuthorName: hookpayload.Str(name),
		AuthorEmail: hookpayload.Str(email), Status: &status, Duration: duration,
		StartedAt: hookpayload.Time(started), FinishedAt: hookpayload.Time(finished),
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
func (s *Server) pushData(p *project, pusher *user, branch, before, after string, commits []pushedCommit) *hookpayload.Push {
	list := []hookpayload.PushedCommit{}
	for _, c := range commits[max(0, len(commits)-20):] {
		list = append(list, hookpayload.PushedCommit{
			Commit: s.hookCommit(p, c.id, c.Message, c.AuthorName, c.AuthorEmail, c.at),
			Added:  c.Added, Modified: c.Modified, Removed: c.Removed,
		})
	}
	info := s.hookProjectInfo(p)
	m := &hookpayload.Push{
		ObjectKind: "push", EventName: "push", Before: before, After: after, Ref: "refs/heads/" + branch,
		ProjectID: p.id, Project: info.Project(), Commits: list, TotalCommitsCount: len(commits),
		Repository: info.LongRepository(),
	}
	if after != hookpayload.ZeroSHA {
		m.CheckoutSHA = &after
	}
	if pusher != nil {
		m.UserID, m.UserName, m.UserEmail = hookpayload.Ptr(pusher.id), hookpayload.Ptr(pusher.name), hookpayload.Ptr(pusher.email)
	}
	return m
}
