package catchup

import (
	"cmp"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
	"github.com/collabsvc/collab/webhook"
)

// The payloads below are webhook's own event types filled from API records,
// encoded as the fake server encodes its deliveries (package serverform), so
// that a synthesized event has the keys of the webhook of its kind, and its
// times are written as the server writes them: a synthesized event and the
// webhook of the same change then share a dedup key.

// hookProject is what payloads tell of a project.
func hookProject(p *collab.Project) *webhook.Project {
	info := webhook.Project{
		Name: p.Name, Description: p.Description, WebURL: p.WebURL, AvatarURL: p.AvatarURL,
		GitSSHURL: p.SSHURLToRepo, GitHTTPURL: p.HTTPURLToRepo, PathWithNamespace: p.PathWithNamespace,
		DefaultBranch: serverform.Str(p.DefaultBranch), VisibilityLevel: p.VisibilityLevel,
	}
	if p.Namespace != nil {
		info.Namespace = p.Namespace.Name
	}
	return serverform.Project(info)
}

func (s *scan) issuePayload(is *collab.Issue) any {
	attrs := s.issueColumns(is)
	attrs.URL, attrs.Action = serverform.IssueURL(s.project.WebURL, is.IID), s.issueAction(is)
	// Who acted is unknown, so user is null.
	return &webhook.IssueEvent{ObjectKind: "issue", Project: s.info, Repository: serverform.Repository(s.info),
		ObjectAttributes: attrs, Assignee: hookUser(is.Assignee)}
}

// issueColumns is an issue as payloads dump it: an issue event's
// object_attributes without url and action, or the issue a comment is on.
func (s *scan) issueColumns(is *collab.Issue) *webhook.IssueAttributes {
	return &webhook.IssueAttributes{
		ID: is.ID, IID: is.IID, Title: is.Title, Description: is.Description, State: is.State,
		ProjectID: is.ProjectID, AuthorID: userID(is.Author), AssigneeID: serverform.ID(userID(is.Assignee)),
		MilestoneID: milestoneID(is.Milestone), DueDate: is.DueDate, CreatedAt: is.CreatedAt, UpdatedAt: is.UpdatedAt,
	}
}

func (s *scan) mergeRequestPayload(mr *collab.MergeRequest) any {
	attrs := s.mergeRequestColumns(mr)
	attrs.URL, attrs.Action = serverform.MergeRequestURL(s.project.WebURL, mr.IID), s.mergeRequestAction(mr)
	return &webhook.MergeRequestEvent{ObjectKind: "merge_request", Project: s.info, Repository: serverform.Repository(s.info),
		ObjectAttributes: attrs, Assignee: hookUser(mr.Assignee)}
}

// mergeRequestColumns is a merge request as payloads dump it. The source
// project is the project itself for a merge request within it, else
// unknown (null); the last commit is unknown.
func (s *scan) mergeRequestColumns(mr *collab.MergeRequest) *webhook.MergeRequestAttributes {
	var source *webhook.Project
	if mr.SourceProjectID == s.project.ID {
		source = s.info
	}
	return &webhook.MergeRequestAttributes{
		ID: mr.ID, IID: mr.IID, Title: mr.Title, Description: mr.Description, State: mr.State,
		MergeStatus: mr.MergeStatus, SourceBranch: mr.SourceBranch, TargetBranch: mr.TargetBranch,
		SourceProjectID: mr.SourceProjectID, TargetProjectID: mr.TargetProjectID, AuthorID: userID(mr.Author),
		AssigneeID: serverform.ID(userID(mr.Assignee)), MilestoneID: milestoneID(mr.Milestone),
		MergeWhenBuildSucceeds: mr.MergeWhenBuildSucceeds, CreatedAt: mr.CreatedAt, UpdatedAt: mr.UpdatedAt,
		Source: source, Target: s.info, WorkInProgress: mr.WorkInProgress,
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
	issue        *webhook.IssueAttributes
	mergeRequest *webhook.MergeRequestAttributes
}

func (s *scan) issueNoteable(is *collab.Issue) noteable {
	return noteable{typ: webhook.NoteableIssue, url: serverform.IssueURL(s.project.WebURL, is.IID), issue: s.issueColumns(is)}
}

func (s *scan) mergeRequestNoteable(mr *collab.MergeRequest) noteable {
	return noteable{typ: webhook.NoteableMergeRequest, url: serverform.MergeRequestURL(s.project.WebURL, mr.IID),
		mergeRequest: s.mergeRequestColumns(mr)}
}

// addNote collects a comment made since the checkpoint.
func (s *scan) addNote(n *collab.Note, on noteable) {
	at := timeOf(n.CreatedAt)
	if n.System || s.notes[n.ID] || s.old(at) {
		return
	}
	s.notes[n.ID] = true
	s.add(at, webhook.KindNote, &webhook.NoteEvent{
		ObjectKind: "note", User: hookUser(n.Author), ProjectID: s.project.ID, Project: s.info,
		Repository: serverform.Repository(s.info),
		ObjectAttributes: &webhook.NoteAttributes{
			ID: n.ID, Note: n.Body, NoteableType: on.typ, NoteableID: serverform.ID(n.NoteableID),
			AuthorID: userID(n.Author), ProjectID: s.project.ID, Attachment: n.Attachment,
			CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, URL: serverform.NoteURL(on.url, n.ID),
		},
		Issue: on.issue, MergeRequest: on.mergeRequest,
	}, n)
}

// addPush collects a push from a project event: its data is the push
// webhook's body, with fewer keys; the project is described as it is now.
func (s *scan) addPush(e *collab.ProjectEvent, at time.Time) {
	d := *e.Data
	kind, objectKind := webhook.KindPush, "push"
	if strings.HasPrefix(d.Ref, "refs/tags/") {
		kind, objectKind = webhook.KindTagPush, "tag_push"
	}
	d.ObjectKind, d.EventName = objectKind, objectKind
	d.ProjectID, d.Project, d.Repository = cmp.Or(d.ProjectID, s.project.ID), s.info, serverform.Repository(s.info)
	s.add(at, kind, &webhook.PushEvent{PushData: d}, e)
}

// buildPayload is a build event; the API tells nothing of the build's
// pipeline but its commit, nor of the commit before.
func (s *scan) buildPayload(b *collab.Build) any {
	body := &webhook.BuildEvent{
		ObjectKind: "build", Ref: b.Ref, Tag: b.Tag, BeforeSHA: serverform.ZeroSHA, BuildID: b.ID, BuildName: b.Name,
		BuildStage: b.Stage, BuildStatus: b.Status, BuildStartedAt: b.StartedAt, BuildFinishedAt: b.FinishedAt,
		ProjectID: s.project.ID, ProjectName: s.project.NameWithNamespace, User: &webhook.BuildEventUser{},
		Pipeline: &webhook.Pipeline{}, Repository: serverform.Repository(s.info),
	}
	if b.StartedAt != nil && b.FinishedAt != nil {
		d := b.FinishedAt.Sub(b.StartedAt.Time).Seconds()
		body.BuildDuration = &d
	}
	if c := b.Commit; c != nil {
		body.SHA = c.ID
		body.Pipeline = &webhook.Pipeline{SHA: c.ID, Message: &c.Message, AuthorName: &c.AuthorName, AuthorEmail: &c.AuthorEmail}
	}
	if u := b.User; u != nil {
		body.User = &webhook.BuildEventUser{ID: &u.ID, Name: &u.Name, Email: &u.Email}
	}
	return body
}

// hookUser is the user object of payloads; nil (null) when unknown.
func hookUser(u *collab.User) *webhook.User {
	if u == nil {
		return nil
	}
	return &webhook.User{Name: u.Name, Username: u.Username, AvatarURL: u.AvatarURL}
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
	return serverform.ID(m.ID)
}

func unfinished(status collab.BuildStatus) bool {
	return status == collab.BuildPending || status == collab.BuildRunning
}
