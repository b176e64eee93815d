package collabtest

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
)

// The fake's answers are the SDK's own records, filled from the fake's
// state and encoded in the server's format (package serverform), so that a
// field added to a record is in the fake's answers with no other edit.

// answer is rec as the API answers with it, without the keys at the paths
// omit lists: those of another variant of the record.
type answer struct {
	rec  any
	omit []string
	// clear are top-level keys written after the record's own in place of
	// its fields: a private token, which a collab.Secret field would write
	// redacted, or a list whose items are of different variants.
	clear map[string]any
}

// reply is rec as the API answers with it, without the keys at the omit
// paths.
func reply(rec any, omit ...string) answer { return answer{rec: rec, omit: omit} }

// MarshalJSON writes the answer in the server's format.
func (a answer) MarshalJSON() ([]byte, error) {
	omit := a.omit
	for _, k := range slices.Sorted(maps.Keys(a.clear)) {
		omit = append(omit[:len(omit):len(omit)], k)
	}
	b, err := serverform.Answer(a.rec, omit...)
	if err != nil || len(a.clear) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, k := range slices.Sorted(maps.Keys(a.clear)) {
		v, err := json.Marshal(a.clear[k])
		if err != nil {
			return nil, err
		}
		b = append(append(append(append(b, ','), strconv.Quote(k)...), ':'), v...)
	}
	return append(b, '}'), nil
}

// briefUserOmit are the keys of a collab.User that the brief user embedded
// in records leaves out: those of the merge request variant.
var briefUserOmit = []string{"email", "created_at"}

// ticketOmit are the keys an issue or merge request answer leaves out of
// its embedded users; clipped, so that appending to it copies.
var ticketOmit = slices.Clip(append(serverform.Under("author", briefUserOmit...), serverform.Under("assignee", briefUserOmit...)...))

// record is u as embedded in most records, nil for a missing user.
func (u *user) record(baseURL string) *collab.User {
	if u == nil {
		return nil
	}
	return &collab.User{ID: u.id, Name: u.name, Username: u.username, State: collab.UserState(u.state),
		WebURL: baseURL + "/" + u.username}
}

// profileRecord is u with its profile, as build records embed it and as a
// user who is not an administrator reads another (without email).
func (u *user) profileRecord(baseURL string) *collab.BuildUser {
	if u == nil {
		return nil
	}
	rec := &collab.BuildUser{User: *u.record(baseURL), UserProfile: collab.UserProfile{
		IsAdmin: u.admin, Bio: serverform.Str(u.bio), Skype: u.skype, LinkedIn: u.linkedin, Twitter: u.twitter,
		WebsiteURL: u.website,
	}}
	rec.CreatedAt = apiTime(u.createdAt)
	return rec
}

// accountRecord is the full user record, which administrators see
// everywhere and every user sees of themselves; Current adds the private
// token.
func (u *user) accountRecord(baseURL string) *collab.UserDetails {
	p := u.profileRecord(baseURL)
	rec := &collab.UserDetails{User: p.User, UserProfile: p.UserProfile, ConfirmedAt: apiTime(u.createdAt),
		ThemeID: 1, ColorSchemeID: 1, ProjectsLimit: 10, Identities: []*collab.Identity{},
		CanCreateGroup: u.canCreateGroup, CanCreateProject: true}
	rec.Email = u.email
	return rec
}

// userRecord is user id as embedded in most records, or nil.
func (s *Server) userRecord(id int) *collab.User { return s.users[id].record(s.URL) }

// apiTime is t as a record's time, nil for the zero time.
func apiTime(t time.Time) *collab.Time { return serverform.Time(t) }

// apiDate is a YYYY-MM-DD date as a record's date, nil for "".
func apiDate(d string) *collab.Time {
	t, err := time.Parse(time.DateOnly, d) // validated on input
	if err != nil {
		return nil
	}
	return &collab.Time{Time: t, DateOnly: true}
}

// milestoneRecord is ms as a record, nil for none.
func (s *Server) milestoneRecord(ms *milestone) *collab.Milestone {
	if ms == nil {
		return nil
	}
	return &collab.Milestone{
		ID: ms.id, IID: ms.iid, ProjectID: ms.projectID, Title: ms.title, Description: &ms.description,
		State: collab.MilestoneState(ms.state), DueDate: apiDate(ms.dueDate),
		CreatedAt: apiTime(ms.createdAt), UpdatedAt: apiTime(ms.updatedAt),
	}
}

// issueRecord is is as a record for caller u.
func (s *Server) issueRecord(is *issue, u *user) *collab.Issue {
	t := &is.ticket
	up, down := s.votes(t.kind, t.id)
	return &collab.Issue{
		ID: t.id, IID: t.iid, ProjectID: t.projectID, Title: t.title, Description: serverform.Str(t.description),
		State: collab.IssueState(t.state), CreatedAt: apiTime(t.createdAt), UpdatedAt: apiTime(t.updatedAt),
		Labels: t.labels, Milestone: s.milestoneRecord(s.milestones[t.milestoneID]), Assignee: s.userRecord(t.assigneeID),
		Author: s.userRecord(t.authorID), Subscribed: u != nil && t.subscribers[u.id],
		UserNotesCount: s.countNotes("Issue", is.id), Upvotes: up, Downvotes: down, DueDate: apiDate(is.dueDate),
	}
}

// mergeRequestRecord is mr as a record for caller u, without changes.
func (s *Server) mergeRequestRecord(mr *mergeRequest, u *user) *collab.MergeRequest {
	t := &mr.ticket
	up, down := s.votes(t.kind, t.id)
	status := collab.MergeStatus("can_be_merged")
	if mr.conflicts {
		status = "cannot_be_merged"
	}
	return &collab.MergeRequest{
		ID: t.id, IID: t.iid, ProjectID: t.projectID, SourceBranch: mr.sourceBranch, TargetBranch: mr.targetBranch,
		SourceProjectID: mr.sourceProjectID, TargetProjectID: mr.targetProjectID, Title: t.title,
		Description: &t.description, State: collab.MergeRequestState(t.state), CreatedAt: apiTime(t.createdAt),
		UpdatedAt: apiTime(t.updatedAt), Upvotes: up, Downvotes: down, Author: s.userRecord(t.authorID),
		Assignee: s.userRecord(t.assigneeID), Labels: t.labels, Milestone: s.milestoneRecord(s.milestones[t.milestoneID]),
		WorkInProgress: mr.workInProgress(), MergeWhenBuildSucceeds: mr.mergeWhenBuildSucceeds, MergeStatus: status,
		Subscribed: u != nil && t.subscribers[u.id], UserNotesCount: s.countNotes("MergeRequest", mr.id),
		ShouldRemoveSourceBranch: &mr.shouldRemoveSourceBranch, ForceRemoveSourceBranch: new(bool),
	}
}

// noteRecord is n as a record.
func (s *Server) noteRecord(n *note) *collab.Note {
	return &collab.Note{
		ID: n.id, Body: n.body, Attachment: serverform.Str(n.attachment), Author: s.userRecord(n.authorID),
		CreatedAt: apiTime(n.createdAt), UpdatedAt: apiTime(n.updatedAt), System: n.system,
		NoteableID: n.noteableID, NoteableType: n.noteableType, Upvote: n.upvote, Downvote: n.downvote,
	}
}

// buildRecord is b as the consumer API returns it, with artifacts_file;
// erase and keep answer download_url instead (see actionBuildJSON).
func (s *Server) buildRecord(b *build) *collab.Build {
	rec := &collab.Build{
		ID: b.id, Name: b.name, Stage: b.stage, Ref: b.ref, Tag: b.tag, Status: collab.BuildStatus(b.status),
		Coverage: b.coverage, CreatedAt: apiTime(b.createdAt), StartedAt: apiTime(b.startedAt),
		FinishedAt: apiTime(b.finishedAt), Runner: s.runners[b.runnerID].record(),
		Commit: &collab.BuildCommit{ID: b.commitID, ShortID: b.commitID[:min(8, len(b.commitID))], Title: b.commitMessage,
			Message: b.commitMessage, CreatedAt: apiTime(b.createdAt)},
	}
	if b.artifacts != nil {
		rec.ArtifactsFile = &collab.ArtifactsFile{Filename: b.artifactsName, Size: int64(len(b.artifacts))}
	}
	if u := s.users[b.userID]; u != nil {
		rec.User = u.profileRecord(s.URL)
		rec.Commit.AuthorName, rec.Commit.AuthorEmail = u.name, u.email
	}
	return rec
}

// buildOmit are the keys a build record leaves out of its user.
var buildOmit = serverform.Under("user", "email", "location")

// record is r as build records embed it, nil for none.
func (r *runner) record() *collab.BuildRunner {
	if r == nil {
		return nil
	}
	return &collab.BuildRunner{ID: r.id, Description: &r.description, Active: r.active, IsShared: r.isShared,
		Name: serverform.Str(r.name)}
}
