package webhook

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep"
	"github.com/collabsvc/collab/internal/wire"
)

// Kind is an event kind, as the X-Gitlab-Event header names it.
type Kind string

// The kinds of project hook events.
const (
	KindPush         Kind = "Push Hook"
	KindTagPush      Kind = "Tag Push Hook"
	KindIssue        Kind = "Issue Hook"
	KindMergeRequest Kind = "Merge Request Hook"
	KindNote         Kind = "Note Hook"
	KindBuild        Kind = "Build Hook"
	KindWikiPage     Kind = "Wiki Page Hook"
)

// The request headers of a webhook delivery.
const (
	HeaderEvent = "X-Gitlab-Event"
	HeaderToken = "X-Gitlab-Token"
)

// objectKinds maps a body's object_kind to its kind, for deliveries without
// the header.
var objectKinds = map[string]Kind{
	"push": KindPush, "tag_push": KindTagPush, "issue": KindIssue, "merge_request": KindMergeRequest,
	"note": KindNote, "build": KindBuild, "wiki_page": KindWikiPage,
}

// Event is one decoded delivery: *PushEvent, *TagPushEvent, *IssueEvent,
// *MergeRequestEvent, *NoteEvent, *BuildEvent, *WikiPageEvent or *RawEvent.
type Event interface {
	Kind() Kind
}

// Kind returns KindPush.
func (*PushEvent) Kind() Kind { return KindPush }

// Kind returns KindTagPush.
func (*TagPushEvent) Kind() Kind { return KindTagPush }

// Kind returns KindIssue.
func (*IssueEvent) Kind() Kind { return KindIssue }

// Kind returns KindMergeRequest.
func (*MergeRequestEvent) Kind() Kind { return KindMergeRequest }

// Kind returns KindNote.
func (*NoteEvent) Kind() Kind { return KindNote }

// Kind returns KindBuild.
func (*BuildEvent) Kind() Kind { return KindBuild }

// Kind returns KindWikiPage.
func (*WikiPageEvent) Kind() Kind { return KindWikiPage }

// Kind returns the kind the delivery named.
func (e *RawEvent) Kind() Kind { return e.EventKind }

// DecodeError lists the values of a payload that did not fit their fields.
// It comes with an event in which every other field is set, and wraps
// collab.FieldErrors: the rule of the client's calls, so that one
// errors.As(err, &fieldErrs) tells a partial result wherever it comes from.
type DecodeError struct {
	Kind   Kind
	Fields collab.FieldErrors
}

// Error names the kind and each value that did not fit.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("webhook: %s: %d field(s) not decoded: %s", e.Kind, len(e.Fields), e.Fields.Error())
}

// Unwrap returns Fields.
func (e *DecodeError) Unwrap() error { return e.Fields }

// errNullBody is a body of JSON null, which holds no event.
var errNullBody = errors.New("the body is null")

// ErrBodyTooLarge is returned by Parse for a body larger than its limit.
var ErrBodyTooLarge = errors.New("webhook: body too large")

// DefaultMaxBodySize is the body limit of Parse and of a Handler without
// MaxBodySize. Payloads are small, but descriptions, snippets, wiki pages and
// commit messages are not capped by the server.
const DefaultMaxBodySize = 10 << 20

// Parse reads and decodes the webhook delivery r, reading at most
// DefaultMaxBodySize bytes. It checks neither the method nor the token: see
// ValidToken. See ParsePayload for what it returns.
func Parse(r *http.Request) (Event, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, DefaultMaxBodySize+1))
	if err != nil {
		return nil, fmt.Errorf("webhook: reading the body: %w", err)
	}
	if len(body) > DefaultMaxBodySize {
		return nil, ErrBodyTooLarge
	}
	return ParsePayload(r.Header, body)
}

// ParsePayload decodes a delivery from its headers and body. The kind comes
// from the X-Gitlab-Event header, or from the body's object_kind when the
// header is missing. A kind this package does not know comes back as a
// *RawEvent with no error.
//
// A body that is not a JSON object is an error with a nil event. When only
// some values do not fit their fields (such as a malformed time), the event
// comes back with every other field set, together with a *DecodeError naming
// each bad value (it wraps collab.FieldErrors); the raw values are kept in
// the Extra maps.
func ParsePayload(header http.Header, body []byte) (Event, error) {
	// null decodes into any struct as no change at all; for a delivery it
	// is no event.
	null := bytes.Equal(bytes.TrimSpace(body), []byte("null"))
	kind := Kind(header.Get(HeaderEvent))
	if kind == "" {
		var err error
		if kind, err = bodyKind(body, null); err != nil {
			return nil, err
		}
	}
	if null {
		return nil, fmt.Errorf("webhook: %s: %w", kind, errNullBody)
	}
	dec, ok := decoders[kind]
	if !ok {
		return &RawEvent{EventKind: kind, Header: safeHeader(header), Body: bytes.Clone(body)}, nil
	}
	ev, err := dec(body)
	err = jsonkeep.Public[collab.FieldErrors](err)
	var kept collab.FieldErrors
	switch {
	case err == nil:
		return ev, nil
	case errors.As(err, &kept):
		return ev, &DecodeError{Kind: kind, Fields: kept}
	default:
		return nil, fmt.Errorf("webhook: %s: %w", kind, err)
	}
}

// bodyKind is the kind a body's object_kind names, for a delivery without
// the X-Gitlab-Event header.
func bodyKind(body []byte, null bool) (Kind, error) {
	var probe struct {
		ObjectKind string `json:"object_kind"`
	}
	err := json.Unmarshal(body, &probe)
	if err == nil && null {
		err = errNullBody
	}
	if err != nil {
		return "", fmt.Errorf("webhook: no %s header and the body is not a JSON object: %w", HeaderEvent, err)
	}
	if kind := objectKinds[probe.ObjectKind]; kind != "" {
		return kind, nil
	}
	return Kind(probe.ObjectKind), nil
}

// decoders decode the body of each known kind straight into its event, in
// one pass: the decoder checks the syntax itself.
var decoders = map[Kind]func(body []byte) (Event, error){
	KindPush: func(body []byte) (Event, error) {
		e := &PushEvent{}
		return e, jsonkeep.Decode(body, &e.PushData)
	},
	KindTagPush: func(body []byte) (Event, error) {
		e := &TagPushEvent{}
		return e, jsonkeep.Decode(body, &e.PushData)
	},
	KindIssue:        decode[IssueEvent],
	KindMergeRequest: decode[MergeRequestEvent],
	KindNote:         decode[NoteEvent],
	KindBuild:        decode[BuildEvent],
	KindWikiPage:     decode[WikiPageEvent],
}

// decode reads body into a new T.
func decode[T any, P interface {
	*T
	Event
}](body []byte) (Event, error) {
	v := P(new(T))
	return v, jsonkeep.Decode(body, v)
}

// ValidToken reports whether the X-Gitlab-Token header of a delivery equals
// secret, in constant time. The server sends the token verbatim, and no
// header when the hook has none; an empty secret accepts only that.
func ValidToken(header http.Header, secret string) bool {
	got := header.Values(HeaderToken)
	if len(got) > 1 {
		return false
	}
	if len(got) == 0 {
		return secret == ""
	}
	return subtle.ConstantTimeCompare([]byte(got[0]), []byte(secret)) == 1
}

// safeHeader copies h without the headers that carry secrets.
func safeHeader(h http.Header) http.Header {
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	for _, k := range secretHeaders {
		delete(c, k) // as c.Del(k), without canonicalizing k each time
	}
	return c
}

// secretHeaders are the canonical names of the headers that carry secrets:
// the token, and those a proxy in front of the receiver may add.
var secretHeaders = func() []string {
	names := []string{http.CanonicalHeaderKey(HeaderToken)}
	for _, k := range wire.CredentialHeaders {
		names = append(names, http.CanonicalHeaderKey(k))
	}
	return names
}()
