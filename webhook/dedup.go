package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep"
)

// DedupKey returns the identity of a delivery: the same for the same body
// delivered twice, different for different events. It is built from the
// payload's own identifiers:
//
//	issue/<id>/<updated_at>/<body hash>          an issue event (updated_at in UTC, RFC 3339)
//	merge_request/<id>/<updated_at>/<body hash>  a merge request event
//	note/<id>                                    a note event
//	build/<id>/<status>                          a build event
//	push/<project>/<ref>/<before>/<after>        a push
//	tag_push/<project>/<ref>/<before>/<after>    a tag push
//
// Other events, and payloads missing those values, are keyed by a hash of
// the body. An issue or merge request key ends with a hash of the body
// because updated_at has one-second resolution: two changes within one
// second (an issue opened and at once labelled by a bot) are two events.
// Its prefix without the hash is the delivery's StateKey, which is what an
// event synthesized by catch-up from the same state is keyed by.
func DedupKey(ev Event, body []byte) string {
	return identityOf(ev).key(body)
}

// identity holds what names an event and orders it: the values of its
// dedup key and its partition.
type identity struct {
	kind               Kind
	projectID          int
	ref, before, after string
	id                 int // of the issue, merge request or note
	updatedAt          *collab.Time
	buildID            int
	buildStatus        string
	parentKind         string // of a note: "issue" or "merge_request"
	parentID           int
}

// identityOf reads the identity of a decoded event.
func identityOf(ev Event) identity {
	id := identity{kind: ev.Kind()}
	switch e := ev.(type) {
	case *PushEvent:
		id.projectID, id.ref, id.before, id.after = e.ProjectID, e.Ref, e.Before, e.After
	case *TagPushEvent:
		id.projectID, id.ref, id.before, id.after = e.ProjectID, e.Ref, e.Before, e.After
	case *IssueEvent:
		if a := e.ObjectAttributes; a != nil {
			id.id, id.updatedAt = a.ID, a.UpdatedAt
		}
	case *MergeRequestEvent:
		if a := e.ObjectAttributes; a != nil {
			id.id, id.updatedAt = a.ID, a.UpdatedAt
		}
	case *NoteEvent:
		if a := e.ObjectAttributes; a != nil {
			id.id = a.ID
			if a.NoteableID != nil {
				id.parentKind, id.parentID = noteParents[a.NoteableType], *a.NoteableID
			}
		}
		switch {
		case e.Issue != nil && e.Issue.ID != 0:
			id.parentKind, id.parentID = "issue", e.Issue.ID
		case e.MergeRequest != nil && e.MergeRequest.ID != 0:
			id.parentKind, id.parentID = "merge_request", e.MergeRequest.ID
		}
	case *BuildEvent:
		id.buildID, id.buildStatus = e.BuildID, e.BuildStatus
	}
	return id
}

// noteParents maps a note's noteable type to the kind of its partition.
var noteParents = map[string]string{NoteableIssue: "issue", NoteableMergeRequest: "merge_request"}

// objectNames are the key and partition prefixes of the kinds with objects.
var objectNames = map[Kind]string{KindIssue: "issue", KindMergeRequest: "merge_request", KindPush: "push", KindTagPush: "tag_push"}

func (id identity) key(body []byte) string {
	switch id.kind {
	case KindPush, KindTagPush:
		if id.after != "" {
			return fmt.Sprintf("%s/%d/%s/%s/%s", objectNames[id.kind], id.projectID, id.ref, id.before, id.after)
		}
	case KindIssue, KindMergeRequest:
		if s := id.stateKey(); s != "" {
			sum := sha256.Sum256(body)
			return s + "/" + hex.EncodeToString(sum[:8])
		}
	case KindNote:
		if id.id != 0 {
			return fmt.Sprintf("note/%d", id.id)
		}
	case KindBuild:
		if id.buildID != 0 {
			return fmt.Sprintf("build/%d/%s", id.buildID, id.buildStatus)
		}
	}
	sum := sha256.Sum256(body)
	return "body/" + hex.EncodeToString(sum[:])
}

// stateKey names the state of the issue or merge request an event reports,
// "" for other kinds: two events of one state differ in their action and
// changes, which only the body tells apart.
func (id identity) stateKey() string {
	if (id.kind != KindIssue && id.kind != KindMergeRequest) || id.id == 0 || id.updatedAt == nil {
		return ""
	}
	return fmt.Sprintf("%s/%d/%s", objectNames[id.kind], id.id, id.updatedAt.UTC().Format(time.RFC3339))
}

// partition names the object whose events must keep their order: the issue
// or merge request (a note's included), the build, or the pushed branch; ""
// when order does not matter.
func (id identity) partition() string {
	switch id.kind {
	case KindIssue, KindMergeRequest:
		if id.id != 0 {
			return objectNames[id.kind] + "/" + strconv.Itoa(id.id)
		}
	case KindNote:
		if id.parentKind != "" && id.parentID != 0 {
			return id.parentKind + "/" + strconv.Itoa(id.parentID)
		}
	case KindBuild:
		if id.buildID != 0 {
			return "build/" + strconv.Itoa(id.buildID)
		}
	case KindPush:
		return "push/" + strconv.Itoa(id.projectID) + "/" + id.ref
	}
	return ""
}

// probe is the part of a payload that makes its identity. Decoding only it
// costs a fraction of decoding the event, so that a delivery is stored and
// answered sooner; the workers decode the rest.
type probe struct {
	ProjectID        int    `json:"project_id"`
	Ref              string `json:"ref"`
	Before           string `json:"before"`
	After            string `json:"after"`
	BuildID          int    `json:"build_id"`
	BuildStatus      string `json:"build_status"`
	ObjectAttributes *struct {
		ID           int          `json:"id"`
		UpdatedAt    *collab.Time `json:"updated_at"`
		NoteableType string       `json:"noteable_type"`
		NoteableID   *int         `json:"noteable_id"`
	} `json:"object_attributes"`
	Issue        *struct{ ID int } `json:"issue"`
	MergeRequest *struct{ ID int } `json:"merge_request"`
}

// probeIdentity reads the identity of a body of a known kind. It reports
// false when only the full decoder can tell (an unknown kind, or a value in
// a form the probe does not take).
func probeIdentity(kind Kind, body []byte) (identity, bool) {
	switch kind {
	case KindPush, KindTagPush, KindIssue, KindMergeRequest, KindNote, KindBuild, KindWikiPage:
	default:
		return identity{}, false
	}
	var p probe
	if jsonkeep.Decode(body, &p) != nil {
		return identity{}, false
	}
	id := identity{kind: kind}
	a := p.ObjectAttributes
	switch kind {
	case KindPush, KindTagPush:
		id.projectID, id.ref, id.before, id.after = p.ProjectID, p.Ref, p.Before, p.After
	case KindIssue, KindMergeRequest:
		if a != nil {
			id.id, id.updatedAt = int(a.ID), a.UpdatedAt
		}
	case KindNote:
		if a != nil {
			id.id = int(a.ID)
			if a.NoteableID != nil {
				id.parentKind, id.parentID = noteParents[a.NoteableType], *a.NoteableID
			}
		}
		switch {
		case p.Issue != nil && p.Issue.ID != 0:
			id.parentKind, id.parentID = "issue", p.Issue.ID
		case p.MergeRequest != nil && p.MergeRequest.ID != 0:
			id.parentKind, id.parentID = "merge_request", p.MergeRequest.ID
		}
	case KindBuild:
		id.buildID, id.buildStatus = p.BuildID, p.BuildStatus
	}
	return id, true
}

// newDelivery builds the record of a delivery that arrived at now (or that
// catch-up synthesized): its key, partition and kind, its headers without
// secrets, and its body.
func newDelivery(header http.Header, body []byte, ev Event, now time.Time) *Delivery {
	d := probedDelivery(header, body, identityOf(ev), now)
	d.event = ev
	return d
}

// probedDelivery is newDelivery for a body not decoded yet.
func probedDelivery(header http.Header, body []byte, id identity, now time.Time) *Delivery {
	return &Delivery{
		Key:        id.key(body),
		StateKey:   id.stateKey(),
		Partition:  id.partition(),
		Kind:       id.kind,
		ReceivedAt: now,
		Header:     safeHeader(header),
		Body:       body,
	}
}
