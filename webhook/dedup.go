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

// identityOf reads the identity of a decoded event: it copies what the probe
// would have read, so that one set of rules serves both.
func identityOf(ev Event) identity {
	var p probe
	a := &p.ObjectAttributes
	switch e := ev.(type) {
	case *PushEvent:
		p.ProjectID, p.Ref, p.Before, p.After = e.ProjectID, e.Ref, e.Before, e.After
	case *TagPushEvent:
		p.ProjectID, p.Ref, p.Before, p.After = e.ProjectID, e.Ref, e.Before, e.After
	case *IssueEvent:
		if e.ObjectAttributes != nil {
			a.ID, a.UpdatedAt = e.ObjectAttributes.ID, e.ObjectAttributes.UpdatedAt
		}
	case *MergeRequestEvent:
		if e.ObjectAttributes != nil {
			a.ID, a.UpdatedAt = e.ObjectAttributes.ID, e.ObjectAttributes.UpdatedAt
		}
	case *NoteEvent:
		if n := e.ObjectAttributes; n != nil {
			a.ID, a.NoteableType, a.NoteableID = n.ID, n.NoteableType, n.NoteableID
		}
		if e.Issue != nil {
			p.Issue.ID = e.Issue.ID
		}
		if e.MergeRequest != nil {
			p.MergeRequest.ID = e.MergeRequest.ID
		}
	case *BuildEvent:
		p.BuildID, p.BuildStatus = e.BuildID, string(e.BuildStatus)
	}
	return p.identity(ev.Kind())
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
// answered sooner; the workers decode the rest. A null or missing object
// reads as its zero value, which names nothing.
type probe struct {
	ProjectID        int    `json:"project_id"`
	Ref              string `json:"ref"`
	Before           string `json:"before"`
	After            string `json:"after"`
	BuildID          int    `json:"build_id"`
	BuildStatus      string `json:"build_status"`
	ObjectAttributes struct {
		ID           int          `json:"id"`
		UpdatedAt    *collab.Time `json:"updated_at"`
		NoteableType string       `json:"noteable_type"`
		NoteableID   *int         `json:"noteable_id"`
	} `json:"object_attributes"`
	Issue        struct{ ID int } `json:"issue"`
	MergeRequest struct{ ID int } `json:"merge_request"`
}

// identity applies the rules of keys and partitions to the values of an
// event of kind.
func (p *probe) identity(kind Kind) identity {
	id := identity{kind: kind}
	a := p.ObjectAttributes
	switch kind {
	case KindPush, KindTagPush:
		id.projectID, id.ref, id.before, id.after = p.ProjectID, p.Ref, p.Before, p.After
	case KindIssue, KindMergeRequest:
		id.id, id.updatedAt = a.ID, a.UpdatedAt
	case KindNote:
		id.id = a.ID
		switch {
		case p.Issue.ID != 0:
			id.parentKind, id.parentID = "issue", p.Issue.ID
		case p.MergeRequest.ID != 0:
			id.parentKind, id.parentID = "merge_request", p.MergeRequest.ID
		case a.NoteableID != nil:
			id.parentKind, id.parentID = noteParents[a.NoteableType], *a.NoteableID
		}
	case KindBuild:
		id.buildID, id.buildStatus = p.BuildID, p.BuildStatus
	}
	return id
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
	return p.identity(kind), true
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
