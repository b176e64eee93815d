// Package webhook receives the webhooks of the Collaboration Service: it
// decodes every event kind into typed events, and serves an http.Handler
// that checks the hook's secret token, answers the sender at once, and runs
// your callbacks on a bounded queue.
//
// # Events
//
// ParsePayload (or Parse, from a request) returns one of *PushEvent,
// *TagPushEvent, *IssueEvent, *MergeRequestEvent, *NoteEvent, *BuildEvent and
// *WikiPageEvent, chosen by the X-Gitlab-Event header (or the body's
// object_kind). Kinds it does not know, such as the System Hook kind or those
// of later server releases, come back as a *RawEvent with no error.
//
// The decoders accept every form the server uses: database times such as
// "2016-06-21 09:14:07 UTC" or "2016-06-21 11:14:07 +0200", RFC 3339 commit
// times, bare dates, numbers sent as strings, and null wherever the server
// may send it. Nothing is lost: keys this package has no field for are kept
// in each object's Extra map, and encoding a decoded event with
// encoding/json writes back every key it arrived with (times in RFC 3339,
// numbers sent as strings as numbers). A value that does not fit its field,
// such as a malformed time, is reported in a *DecodeError by its path, while
// the rest of the event decodes and the raw value stays in Extra.
//
// # Receiving
//
// A Handler checks the method (POST), the content type (application/json),
// the body size (413 past MaxBodySize) and, when Secret is set, the
// X-Gitlab-Token header in constant time (401 when wrong or missing). It then
// queues the event and answers 200; Run's workers call the callback for the
// event's kind. The server gives a receiver 10 seconds to answer: later, it
// counts the delivery as failed and sends the same body again, much later.
// It never sends again after an error answer.
//
// So a full queue is a real loss: the Handler waits up to QueueWait for room,
// then answers 503 and counts the event in Stats.Dropped; the server will not
// retry it. Watch that counter, and size Workers and QueueSize for your load.
//
// Because the server sends no delivery id and repeats a body after a
// timeout, DedupWindow turns on duplicate suppression, keyed by DedupKey, in
// memory or in a DedupStore shared by several receivers.
package webhook
