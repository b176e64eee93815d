package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
)

// DedupKey returns the identity of a delivery: the same for the same event
// delivered twice, different for different events, and the same for an
// event that catch-up synthesizes from the API record of the same change.
// It is built from the payload's own identifiers:
//
//	issue/<id>/<updated_at>          an issue event (updated_at in UTC, RFC 3339)
//	merge_request/<id>/<updated_at>  a merge request event
//	note/<id>                        a note event
//	build/<id>/<status>              a build event
//	push/<project>/<ref>/<before>/<after>      a push
//	tag_push/<project>/<ref>/<before>/<after>  a tag push
//
// Other events, and payloads missing those values, are keyed by a hash of
// the body.
//
// updated_at has one-second resolution, so two changes of one issue or merge
// request within the same second share a key, and the second is taken for a
// repeat.
func DedupKey(ev Event, body []byte) string {
	switch e := ev.(type) {
	case *PushEvent:
		if e.After != "" {
			return fmt.Sprintf("push/%d/%s/%s/%s", e.ProjectID, e.Ref, e.Before, e.After)
		}
	case *TagPushEvent:
		if e.After != "" {
			return fmt.Sprintf("tag_push/%d/%s/%s/%s", e.ProjectID, e.Ref, e.Before, e.After)
		}
	case *IssueEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 && a.UpdatedAt != nil {
			return fmt.Sprintf("issue/%d/%s", a.ID, instant(a.UpdatedAt))
		}
	case *MergeRequestEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 && a.UpdatedAt != nil {
			return fmt.Sprintf("merge_request/%d/%s", a.ID, instant(a.UpdatedAt))
		}
	case *NoteEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return fmt.Sprintf("note/%d", a.ID)
		}
	case *BuildEvent:
		if e.BuildID != 0 {
			return fmt.Sprintf("build/%d/%s", e.BuildID, e.BuildStatus)
		}
	}
	sum := sha256.Sum256(body)
	return "body/" + hex.EncodeToString(sum[:])
}

func instant(t *collab.Time) string {
	return t.UTC().Format(time.RFC3339)
}

// partitionOf names the object whose events must keep their order: the
// issue or merge request (a note's included), the build, or the pushed
// branch; "" when order does not matter.
func partitionOf(ev Event) string {
	switch e := ev.(type) {
	case *IssueEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return "issue/" + strconv.Itoa(a.ID)
		}
	case *MergeRequestEvent:
		if a := e.ObjectAttributes; a != nil && a.ID != 0 {
			return "merge_request/" + strconv.Itoa(a.ID)
		}
	case *NoteEvent:
		switch {
		case e.Issue != nil && e.Issue.ID != 0:
			return "issue/" + strconv.Itoa(e.Issue.ID)
		case e.MergeRequest != nil && e.MergeRequest.ID != 0:
			return "merge_request/" + strconv.Itoa(e.MergeRequest.ID)
		}
		if a := e.ObjectAttributes; a != nil && a.NoteableID != nil {
			switch a.NoteableType {
			case NoteableIssue:
				return "issue/" + strconv.Itoa(*a.NoteableID)
			case NoteableMergeRequest:
				return "merge_request/" + strconv.Itoa(*a.NoteableID)
			}
		}
	case *BuildEvent:
		if e.BuildID != 0 {
			return "build/" + strconv.Itoa(e.BuildID)
		}
	case *PushEvent:
		return "push/" + strconv.Itoa(e.ProjectID) + "/" + e.Ref
	}
	return ""
}

// newDelivery builds the record of a delivery that arrived at now (or that
// catch-up synthesized): its key, partition and kind, its headers without
// secrets, and its body.
func newDelivery(header http.Header, body []byte, ev Event, now time.Time) *Delivery {
	return &Delivery{
		Key:        DedupKey(ev, body),
		Partition:  partitionOf(ev),
		Kind:       ev.Kind(),
		ReceivedAt: now,
		Header:     safeHeader(header),
		Body:       body,
		event:      ev,
	}
}
