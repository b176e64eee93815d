package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"

	"github.com/collabsvc/collab"
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
	return id.keyOf(id.stateKey(), body)
}

// keyOf is key, given the identity's stateKey. Keys are built by appending
// to one buffer: a delivery makes three of them on its way in.
func (id identity) keyOf(state string, body []byte) string {
	var buf [128]byte
	b := buf[:0]
	switch id.kind {
	case KindPush, KindTagPush:
		if id.after != "" {
			b = appendPath(b, objectNames[id.kind], id.projectID, id.ref, id.before, id.after)
			return string(b)
		}
	case KindIssue, KindMergeRequest:
		if state != "" {
			sum := sha256.Sum256(body)
			return string(hex.AppendEncode(append(append(b, state...), '/'), sum[:8]))
		}
	case KindNote:
		if id.id != 0 {
			return string(appendPath(b, "note", id.id))
		}
	case KindBuild:
		if id.buildID != 0 {
			return string(appendPath(b, "build", id.buildID, id.buildStatus))
		}
	}
	sum := sha256.Sum256(body)
	return string(hex.AppendEncode(append(b, "body/"...), sum[:]))
}

// stateKey names the state of the issue or merge request an event reports,
// "" for other kinds: two events of one state differ in their action and
// changes, which only the body tells apart.
func (id identity) stateKey() string {
	if (id.kind != KindIssue && id.kind != KindMergeRequest) || id.id == 0 || id.updatedAt == nil {
		return ""
	}
	var buf [64]byte
	b := append(appendPath(buf[:0], objectNames[id.kind], id.id), '/')
	return string(id.updatedAt.UTC().AppendFormat(b, time.RFC3339))
}

// partition names the object whose events must keep their order: the issue
// or merge request (a note's included), the build, or the pushed branch; ""
// when order does not matter.
func (id identity) partition() string {
	var buf [64]byte
	switch id.kind {
	case KindIssue, KindMergeRequest:
		if id.id != 0 {
			return string(appendPath(buf[:0], objectNames[id.kind], id.id))
		}
	case KindNote:
		if id.parentKind != "" && id.parentID != 0 {
			return string(appendPath(buf[:0], id.parentKind, id.parentID))
		}
	case KindBuild:
		if id.buildID != 0 {
			return string(appendPath(buf[:0], "build", id.buildID))
		}
	case KindPush:
		return string(appendPath(buf[:0], "push", id.projectID, id.ref))
	}
	return ""
}

// appendPath appends name and the parts after it, each after a slash.
func appendPath(b []byte, name string, parts ...any) []byte {
	b = append(b, name...)
	for _, p := range parts {
		b = append(b, '/')
		switch p := p.(type) {
		case int:
			b = strconv.AppendInt(b, int64(p), 10)
		case string:
			b = append(b, p...)
		}
	}
	return b
}

// probe holds the values of a payload that make its identity: read from
// the body by probeIdentity, or copied from a decoded event by identityOf. A
// null or missing object reads as its zero value, which names nothing.
type probe struct {
	ProjectID           int
	Ref, Before, After  string
	BuildID             int
	BuildStatus         string
	ObjectAttributes    attributes
	Issue, MergeRequest struct{ ID int } // a note's
}

// attributes are the values of a payload's object_attributes that make its
// identity.
type attributes struct {
	ID           int
	UpdatedAt    *collab.Time
	NoteableType string
	NoteableID   *int
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
	state := id.stateKey()
	return &Delivery{
		Key:        id.keyOf(state, body),
		StateKey:   state,
		Partition:  id.partition(),
		Kind:       id.kind,
		ReceivedAt: now,
		Header:     safeHeader(header),
		Body:       body,
	}
}
