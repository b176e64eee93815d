package collabtest

import (
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
}

// MarshalJSON writes the answer in the server's format.
func (a answer) MarshalJSON() ([]byte, error) { return serverform.Answer(a.rec, a.omit...) }

// briefUserOmit are the keys of a collab.User that the brief user embedded
// in records leaves out: those of the merge request variant.
var briefUserOmit = []string{"email", "created_at"}

// ticketOmit are the keys an issue or merge request answer leaves out of
// its embedded users.
var ticketOmit = append(serverform.Under("author", briefUserOmit...), serverform.Under("assignee", briefUserOmit...)...)

// record is u as embedded in most records, nil for a missing user.
func (u *user) record(baseURL string) *collab.User {
	if u == nil {
		return nil
	}
	return &collab.User{ID: u.id, Name: u.name, Username: u.username, State: collab.UserState(u.state),
		WebURL: baseURL + "/" + u.username}
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
