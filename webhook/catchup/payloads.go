package catchup

import (
	"cmp"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/hookpayload"
	"github.com/collabsvc/collab/webhook"
)

// The payloads below are built from API records with the types the fake
// server builds its deliveries with (package hookpayload), so that a
// synthesized event has the keys of the webhook of its kind, and its times
// are written as the server writes them: a synthesized event and the
// webhook of the same change then share a dedup key.

// projectInfo is what payloads tell of a project.
func projectInfo(p *collab.Project) hookpayload.ProjectInfo {
	info := hookpayload.ProjectInfo{
		Name: p.Name, Description: deref(p.Description), WebURL: p.WebURL, AvatarURL: deref(p.AvatarURL),
		SSHURL: p.SSHURLToRepo, HTTPURL: p.HTTPURLToRepo, PathWithNamespace: p.PathWithNamespace,
		DefaultBranch: p.DefaultBranch, VisibilityLevel: int(p.VisibilityLevel),
	}
	if p.Namespace != nil {
		info.Namespace = p.Namespace.Name
	}
	return info
}

func (s *scan) issuePayload(is *collab.Issue) any {
	attrs := s.issueColumns(is)
	attrs.URL, attrs.Action = hookpayload.IssueURL(s.project.WebURL, is.IID), string(s.issueAction(is))
	return issuable(s, "issue", attrs, is.Assignee)
}

// issuable is the body of an issue or merge request event in the project
// scanned, attrs its object_attributes. Who acted is unknown, so user is
// null.
func issuable[A any](s *scan, kind string, attrs A, assignee *collab.User) any {
	return &hookpayload.Issuable[A]{
		ObjectKind: kind, Project: s.info.Project(), Repository: s.info.Repository(),
		ObjectAttributes: attrs, Assignee: hookUser(assignee),
	}
}

// issueColumns is an issue as payloads dump it: an issue event's
// object_attributes without url and action, or the issue a comment is on.
func (s *scan) issueColumns(is *collab.Issue) *hookpayload.Issue {
	return &hookpayload.Issue{
		ID: is.ID, IID: is.IID, Title: is.Title, Description: is.Description, State: string(is.State),
		ProjectID: is.ProjectID, AuthorID: userID(is.Author), AssigneeID: hookpayload.ID(userID(is.Assignee)),
		MilestoneID: milestoneID(is.Milestone), DueDate: hookpayload.Date(timeOf(is.DueDate)),
		CreatedAt: hookpayload.Time(timeOf(is.CreatedAt)), UpdatedAt: hookpayload.Time(timeOf(is.UpdatedAt)),
	}
}

func (s *scan) mergeRequestPayload(mr *collab.MergeRequest) any {
	attrs := s.mergeRequestColumns(mr)
	attrs.URL, attrs.Action = hookpayload.MergeRequestURL(s.project.WebURL, mr.IID), string(s.mergeRequestAction(mr))
	return issuable(s, "merge_request", attrs, mr.Assignee)
}

// mergeRequestColumns is a merge request as payloads dump it. The source
// project is the project itself for a merge request within it, else
// unknown (null); the last commit is unknown.
func (s *scan) mergeRequestColumns(mr *collab.MergeRequest) *hookpayload.MergeRequest {
	var source *hookpayload.Project
	if mr.SourceProjectID == s.project.ID {
		source = s.info.Project()
	}
	return &hookpayload.MergeRequest{
		ID: mr.ID, IID: mr.IID, Title: mr.Title, Description: mr.Description, State: string(mr.State),
		MergeStatus: string(mr.MergeStatus), SourceBranch: mr.SourceBranch, TargetBranch: mr.TargetBranch,
		SourceProjectID: mr.SourceProjectID, TargetProjectID: mr.TargetProjectID, AuthorID: userID(mr.Author),
		AssigneeID: hookpayload.ID(userID(mr.Assignee)), MilestoneID: milestoneID(mr.Milestone),
		MergeWhenBuildSucceeds: mr.MergeWhenBuildSucceeds, CreatedAt: hookpayload.Time(timeOf(mr.CreatedAt)),
		UpdatedAt: hookpayload.Time(timeOf(mr.UpdatedAt)), Source: source, Target: s.info.Project(),
		WorkInProgress: mr.WorkInProgress,
	}
}

// issueActions and mergeRequestActions are the actions the states of
// closed records tell; any other state is an open or an update.
var (
	issueActions = map[collab.IssueState]webhook.IssueAction{
		collab.IssueClosed: webhook.IssueClose, collab.IssueReopened: webhook.IssueReopen,
	}
	mergeRequestActions = map[collab.MergeRequestState]webhook.MergeRequestAction{
		collab.MergeRequestClosed: webhook.MergeRequestClose, collab.MergeRequestMerged: webhook.MergeRequestMerge,
		collab.MergeRequestReopened: webhook.MergeRequestReopen,
	}
)

// issueAction guesses an issue event's action from the issue's state:
// open when it was created since the checkpoint.
func (s *scan) issueAction(is *collab.Issue) webhook.IssueAction {
	return guessAction(s, issueActions, is.State, is.CreatedAt, webhook.IssueOpen, webhook.IssueUpdate)
}

// mergeRequestAction guesses a merge request event's action likewise.
func (s *scan) mergeRequestAction(mr *collab.MergeRequest) webhook.MergeRequestAction {
	return guessAction(s, mergeRequestActions, mr.State, mr.CreatedAt, webhook.MergeRequestOpen, webhook.MergeRequestUpdate)
}

// guessAction is the action byState gives state, else open for a record
// created since the checkpoint, else update.
func guessAction[S comparable, A any](s *scan, byState map[S]A, state S, created *collab.Time, open, update A) A {
	if a, ok := byState[state]; ok {
		return a
	}
	if timeOf(created).After(s.checkpoint) {
		return open
	}
	return update
}

// noteable is what a note event tells of the issue or merge request the
// comment is on.
type noteable struct {
	typ          string // webhook.NoteableIssue or webhook.NoteableMergeRequest
	url          string // its web page
	issue        *hookpayload.Issue
	mergeRequest *hookpayload.MergeRequest
}

func (s *scan) issueNoteable(is *collab.Issue) noteable {
	return noteable{typ: webhook.NoteableIssue, url: hookpayload.IssueURL(s.project.WebURL, is.IID), issue: s.issueColumns(is)}
}

func (s *scan) mergeRequestNoteable(mr *collab.MergeRequest) noteable {
	return noteable{typ: webhook.NoteableMergeRequest, url: hookpayload.MergeRequestURL(s.project.WebURL, mr.IID),
		mergeRequest: s.mergeRequestColumns(mr)}
}

// addNote collects a comment made since the checkpoint.
func (s *scan) addNote(n *collab.Note, on noteable) {
	at := timeOf(n.CreatedAt)
	if n.System || s.notes[n.ID] || s.old(at) {
		return
	}
	s.notes[n.ID] = true
	s.add(at, webhook.KindNote, &hookpayload.Note{
		ObjectKind: "note", User: hookUser(n.Author), ProjectID: s.project.ID, Project: s.info.Project(),
		Repository: s.info.Repository(),
		ObjectAttributes: &hookpayload.NoteAttributes{
			ID: n.ID, Note: n.Body, NoteableType: on.typ, NoteableID: hookpayload.ID(n.NoteableID),
			AuthorID: userID(n.Author), ProjectID: s.project.ID, Attachment: n.Attachment,
			CreatedAt: hookpayload.Time(timeOf(n.CreatedAt)), UpdatedAt: hookpayload.Time(timeOf(n.UpdatedAt)),
			URL: hookpayload.NoteURL(on.url, n.ID),
		},
		Issue: on.issue, MergeRequest: on.mergeRequest,
	}, n)
}

// addPush collects a push from a project event: its data is the push
// webhook's body, with fewer keys; the project is described as it is now.
func (s *scan) addPush(e *collab.ProjectEvent, at time.Time) {
	d := e.Data
	kind, objectKind := webhook.KindPush, "push"
	if strings.HasPrefix(d.Ref, "refs/tags/") {
		kind, objectKind = webhook.KindTagPush, "tag_push"
	}
	p := &hookpayload.Push{
		ObjectKind: objectKind, EventName: objectKind, Before: d.Before, After: d.After, Ref: d.Ref,
		CheckoutSHA: d.CheckoutSHA, Message: d.Message, UserAvatar: d.UserAvatar,
		ProjectID: cmp.Or(d.ProjectID, s.project.ID), Project: s.info.Project(), TotalCommitsCount: d.TotalCommitsCount,
		Repository: s.info.LongRepository(),
	}
	if d.UserID != 0 {
		p.UserID, p.UserName, p.UserEmail = hookpayload.Ptr(d.UserID), hookpayload.Ptr(d.UserName), hookpayload.Ptr(d.UserEmail)
	}
	for _, c := range d.Commits {
		p.Commits = append(p.Commits, pushedCommit(c))
	}
	s.add(at, kind, p, e)
}

func pushedCommit(c *collab.PushCommit) hookpayload.PushedCommit {
	pc := hookpayload.PushedCommit{
		Commit: hookpayload.Commit{ID: c.ID, Message: c.Message, Timestamp: hookpayload.CommitTime(timeOf(c.Timestamp)), URL: c.URL},
		Added:  c.Added, Modified: c.Modified, Removed: c.Removed,
	}
	if c.Author != nil {
		pc.Author = hookpayload.CommitAuthor{Name: c.Author.Name, Email: c.Author.Email}
	}
	return pc
}

// buildPayload is a build event; the API tells nothing of the build's
// pipeline but its commit, nor of the commit before.
func (s *scan) buildPayload(b *collab.Build) any {
	body := &hookpayload.Build{
		ObjectKind: "build", Ref: b.Ref, Tag: b.Tag, BeforeSHA: hookpayload.ZeroSHA, BuildID: b.ID, BuildName: b.Name,
		BuildStage: b.Stage, BuildStatus: string(b.Status), BuildStartedAt: hookpayload.Time(timeOf(b.StartedAt)),
		BuildFinishedAt: hookpayload.Time(timeOf(b.FinishedAt)), ProjectID: s.project.ID,
		ProjectName: s.project.NameWithNamespace, Commit: &hookpayload.Pipeline{}, Repository: s.info.LongRepository(),
	}
	if b.StartedAt != nil && b.FinishedAt != nil {
		body.BuildDuration = hookpayload.Ptr(b.FinishedAt.Sub(b.StartedAt.Time).Seconds())
	}
	if c := b.Commit; c != nil {
		body.SHA = c.ID
		body.Commit = &hookpayload.Pipeline{SHA: c.ID, Message: hookpayload.Ptr(c.Message),
			AuthorName: hookpayload.Ptr(c.AuthorName), AuthorEmail: hookpayload.Ptr(c.AuthorEmail)}
	}
	if u := b.User; u != nil {
		body.User = hookpayload.BuildUser{ID: hookpayload.Ptr(u.ID), Name: hookpayload.Ptr(u.Name), Email: hookpayload.Ptr(u.Email)}
	}
	return body
}

// hookUser is the user object of payloads; nil (null) when unknown.
func hookUser(u *collab.User) *hookpayload.User {
	if u == nil {
		return nil
	}
	return &hookpayload.User{Name: hookpayload.Ptr(u.Name), Username: hookpayload.Ptr(u.Username), AvatarURL: u.AvatarURL}
}

func userID(u *collab.User) int {
	if u == nil {
		return 0
	}
	return u.ID
}

func milestoneID(m *collab.Milestone) *int {
	if m == nil {
		return nil
	}
	return hookpayload.ID(m.ID)
}

func unfinished(status collab.BuildStatus) bool {
	return status == collab.BuildPending || status == collab.BuildRunning
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
