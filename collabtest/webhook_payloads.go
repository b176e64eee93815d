package collabtest

import (
	"cmp"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
	"github.com/collabsvc/collab/webhook"
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
var hookEventNames = [...]webhook.Kind{
	pushHook: webhook.KindPush, tagPushHook: webhook.KindTagPush, issueHook: webhook.KindIssue,
	mergeRequestHook: webhook.KindMergeRequest, noteHook: webhook.KindNote, buildHook: webhook.KindBuild,
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
			if body, err = serverform.Encode(payload()); err != nil {
				// Payloads are plain values; should one ever fail to
				// encode, the fake sends nothing rather than stop.
				if s.log != nil {
					s.log.Error("collabtest: a webhook payload does not encode", "kind", hookEventNames[kind], "error", err)
				}
				return nil
			}
		}
		jobs = append(jobs, hookJob{hookID: h.id, projectID: projectID, url: h.url, event: string(hookEventNames[kind]), body: body,
			verifyTLS: h.enableSSLVerification})
	}
	return jobs
}

// commitZone is the committer offset of seeded commits, so that commit
// timestamps carry a numeric offset as real committer dates usually do.
var commitZone = time.FixedZone("", 2*60*60)

// hookUser is the user object of payloads (actor, assignee); its names are
// null for a missing user.
func hookUser(u *user) *webhook.User {
	if u == nil {
		return &webhook.User{}
	}
	return &webhook.User{Name: u.name, Username: u.username}
}

func (s *Server) projectWebURL(p *project) string { return s.URL + "/" + s.projectFullPath(p) }

func (s *Server) projectSSHURL(p *project) string {
	host := s.URL[strings.Index(s.URL, "://")+3:]
	return "git@" + host + ":" + s.projectFullPath(p) + ".git"
}

// hookProject is the project object of payloads, nil for a missing project.
func (s *Server) hookProject(p *project) *webhook.Project {
	if p == nil {
		return nil
	}
	web := s.projectWebURL(p)
	info := webhook.Project{
		Name: p.name, Description: serverform.Str(p.description), WebURL: web, GitSSHURL: s.projectSSHURL(p),
		GitHTTPURL: web + ".git", Namespace: s.namespaceName(p), PathWithNamespace: s.projectFullPath(p),
		VisibilityLevel: collab.VisibilityLevel(p.visibility),
	}
	if len(p.branches) > 0 {
		info.DefaultBranch = &p.defaultBranch
	}
	return serverform.Project(info)
}

// hookCommit is a commit object without file lists.
func (s *Server) hookCommit(p *project, id, message, authorName, authorEmail string, at time.Time) *webhook.PushCommit {
	return &webhook.PushCommit{
		ID: id, Message: message, Timestamp: serverform.Time(at.In(commitZone).Truncate(time.Second)), URL: s.projectWebURL(p) + "/commit/" + id,
		Author: &collab.CommitAuthor{Name: authorName, Email: authorEmail},
	}
}

// issueColumns is the issue row as payloads dump it.
func (s *Server) issueColumns(is *issue) *webhook.IssueAttributes {
	var due *collab.Time
	if d, err := time.Parse(time.DateOnly, is.dueDate); err == nil { // validated on input; "" is null
		due = &collab.Time{Time: d, DateOnly: true}
	}
	return &webhook.IssueAttributes{
		ID: is.id, IID: is.iid, Title: is.title, Description: serverform.Str(is.description), State: collab.IssueState(is.state),
		ProjectID: is.projectID, AuthorID: is.authorID, AssigneeID: serverform.ID(is.assigneeID),
		MilestoneID: serverform.ID(is.milestoneID), DueDate: due,
		CreatedAt: serverform.Time(is.createdAt), UpdatedAt: serverform.Time(is.updatedAt),
	}
}

// ticketURL is the web page of an issue or merge request.
func (s *Server) ticketURL(t *ticket) string {
	web := s.projectWebURL(s.projects[t.projectID])
	if t.kind == "Issue" {
		return serverform.IssueURL(web, t.iid)
	}
	return serverform.MergeRequestURL(web, t.iid)
}

// issuePayload is an Issue Hook body; action is open, update, close or reopen.
func (s *Server) issuePayload(is *issue, actorID int, action string) any {
	attrs := s.issueColumns(is)
	attrs.URL, attrs.Action = s.ticketURL(&is.ticket), webhook.IssueAction(action)
	project := s.hookProject(s.projects[is.projectID])
	return &webhook.IssueEvent{
		ObjectKind: "issue", User: hookUser(s.users[actorID]), Project: project, Repository: serverform.Repository(project),
		ObjectAttributes: attrs, Assignee: s.assignee(is.assigneeID),
	}
}

// assignee is the assignee object of an issue or merge request event: nil,
// so absent, without one.
func (s *Server) assignee(id int) *webhook.User {
	if a := s.users[id]; a != nil {
		return hookUser(a)
	}
	return nil
}

// mergeRequestColumns is the merge request row plus source, target,
// last_commit and work_in_progress, as payloads carry it.
func (s *Server) mergeRequestColumns(mr *mergeRequest) *webhook.MergeRequestAttributes {
	src, dst := s.projects[mr.sourceProjectID], s.projects[mr.targetProjectID]
	status := collab.MergeStatus("can_be_merged")
	if mr.conflicts {
		status = "cannot_be_merged"
	}
	params := webhook.MergeParams{}
	if mr.shouldRemoveSourceBranch {
		params["should_remove_source_branch"] = "1"
	}
	var lastCommit *webhook.PushCommit
	if src != nil {
		if b := src.branches[mr.sourceBranch]; b != nil {
			lastCommit = s.hookCommit(src, b.commitID, b.message, b.authorName, b.authorEmail, b.committedAt)
		}
	}
	return &webhook.MergeRequestAttributes{
		ID: mr.id, IID: mr.iid, Title: mr.title, Description: serverform.Str(mr.description),
		State: collab.MergeRequestState(mr.state), MergeStatus: status, SourceBranch: mr.sourceBranch,
		TargetBranch: mr.targetBranch, SourceProjectID: mr.sourceProjectID, TargetProjectID: mr.targetProjectID,
		AuthorID: mr.authorID, AssigneeID: serverform.ID(mr.assigneeID), MilestoneID: serverform.ID(mr.milestoneID),
		MergeParams: params, MergeWhenBuildSucceeds: mr.mergeWhenBuildSucceeds, CreatedAt: serverform.Time(mr.createdAt),
		UpdatedAt: serverform.Time(mr.updatedAt), Source: s.hookProject(src), Target: s.hookProject(dst),
		LastCommit: lastCommit, WorkInProgress: mr.workInProgress(),
	}
}

// mergeRequestPayload is a Merge Request Hook body; action is open,
// update, close, reopen or merge.
func (s *Server) mergeRequestPayload(mr *mergeRequest, actorID int, action string) any {
	attrs := s.mergeRequestColumns(mr)
	attrs.URL, attrs.Action = s.ticketURL(&mr.ticket), webhook.MergeRequestAction(action)
	project := s.hookProject(s.projects[mr.targetProjectID])
	return &webhook.MergeRequestEvent{
		ObjectKind: "merge_request", User: hookUser(s.users[actorID]), Project: project,
		Repository: serverform.Repository(project), ObjectAttributes: attrs, Assignee: s.assignee(mr.assigneeID),
	}
}

// notePayload is a Note Hook body for a comment on an issue or a merge
// request, with the noteable as the sibling object.
func (s *Server) notePayload(n *note) any {
	project := s.hookProject(s.projects[n.projectID])
	attrs := &webhook.NoteAttributes{
		ID: n.id, Note: n.body, NoteableType: n.noteableType, NoteableID: serverform.ID(n.noteableID),
		AuthorID: n.authorID, ProjectID: n.projectID, Attachment: serverform.Str(n.attachment),
		CreatedAt: serverform.Time(n.createdAt), UpdatedAt: serverform.Time(n.updatedAt),
	}
	m := &webhook.NoteEvent{
		ObjectKind: "note", User: hookUser(s.users[n.authorID]), ProjectID: n.projectID,
		Project: project, Repository: serverform.Repository(project), ObjectAttributes: attrs,
	}
	switch n.noteableType {
	case webhook.NoteableIssue:
		if is := s.issues[n.noteableID]; is != nil {
			m.Issue, attrs.URL = s.issueColumns(is), serverform.NoteURL(s.ticketURL(&is.ticket), n.id)
		}
	case webhook.NoteableMergeRequest:
		if mr := s.mergeRequests[n.noteableID]; mr != nil {
			m.MergeRequest, attrs.URL = s.mergeRequestColumns(mr), serverform.NoteURL(s.ticketURL(&mr.ticket), n.id)
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
	u := &webhook.BuildEventUser{}
	if usr := s.users[b.userID]; usr != nil {
		u = &webhook.BuildEventUser{ID: &usr.id, Name: &usr.name, Email: &usr.email}
	}
	return &webhook.BuildEvent{
		ObjectKind: "build", Ref: b.ref, Tag: b.tag, BeforeSHA: cmp.Or(b.beforeSHA, serverform.ZeroSHA), SHA: b.commitID,
		BuildID: b.id, BuildName: b.name, BuildStage: b.stage, BuildStatus: collab.BuildStatus(b.status),
		BuildStartedAt: serverform.Time(b.startedAt), BuildFinishedAt: serverform.Time(b.finishedAt), BuildDuration: duration,
		ProjectID: b.projectID, ProjectName: s.namespaceName(p) + " / " + p.name,
		User: u, Pipeline: s.pipelinePayload(b), Repository: serverform.Repository(s.hookProject(p)),
	}
}

// pipelinePayload stands in for the pipeline of a build: the fake has no
// pipelines, so the builds of the same project and commit form one, whose id
// is the lowest of their build ids. As on deployed servers, a retried build
// no longer counts: the status is that of the latest build of each name.
func (s *Server) pipelinePayload(b *build) *webhook.Pipeline {
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
	status := collab.BuildStatus(pipelineStatus(counts, len(latest)))
	var duration *int
	if !buildFinished(string(status)) {
		finished = time.Time{}
	} else if !started.IsZero() {
		d := int(finished.Sub(started).Seconds())
		duration = &d
	}
	name, email := "", ""
	if u := s.users[b.userID]; u != nil {
		name, email = u.name, u.email
	}
	return &webhook.Pipeline{
		ID: id, SHA: b.commitID, Message: serverform.Str(b.commitMessage), AuthorName: serverform.Str(name),
		AuthorEmail: serverform.Str(email), Status: &status, Duration: duration,
		StartedAt: serverform.Time(started), FinishedAt: serverform.Time(finished),
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
func (s *Server) pushData(p *project, pusher *user, branch, before, after string, commits []pushedCommit) *collab.PushData {
	list := []*collab.PushCommit{}
	for _, c := range commits[max(0, len(commits)-20):] {
		pc := s.hookCommit(p, c.id, c.Message, c.AuthorName, c.AuthorEmail, c.at)
		pc.Added, pc.Modified, pc.Removed = orEmpty(c.Added), orEmpty(c.Modified), orEmpty(c.Removed)
		list = append(list, pc)
	}
	project := s.hookProject(p)
	m := &collab.PushData{
		ObjectKind: "push", EventName: "push", Before: before, After: after, Ref: "refs/heads/" + branch,
		UserID: pusher.id, UserName: pusher.name, UserEmail: pusher.email,
		ProjectID: p.id, Project: project, Commits: list, TotalCommitsCount: len(commits),
		Repository: serverform.Repository(project),
	}
	if after != serverform.ZeroSHA {
		m.CheckoutSHA = &after
	}
	return m
}

// orEmpty is l, or an empty list for nil: the servers write [].
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
