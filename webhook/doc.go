// Package webhook receives the webhooks of the Collaboration Service: it
// decodes every event kind into typed events, and serves an http.Handler
// that checks the hook's secret token, stores each delivery before it
// answers, and runs your callbacks until they succeed.
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
// such as a malformed time, is reported in a *DecodeError (which wraps
// collab.FieldErrors, as the client's errors do) by its path, while the rest
// of the event decodes and comes back with the error, and the raw value
// stays in Extra. Events are plain values: compare them with reflect,
// testify or cmp, a decoded event with one built in code.
//
// # Receiving
//
// A Handler checks the method (POST), the content type (application/json),
// the body size (413 past MaxBodySize) and, when Secret is set, the
// X-Gitlab-Token header in constant time (401 when wrong or missing). It then
// stores the delivery (body, headers without the token, arrival time) in its
// Queue and answers 200; Run's workers call the callback for the event's
// kind, or OnDelivery for every kind.
//
// The server gives a receiver 10 seconds to answer and never sends a
// delivery again after any answer, so a 200 must mean the event is kept.
// Package diskqueue keeps it on local disk: it survives a crash or a restart
// and is handed out again when the queue is opened next. The default
// MemoryQueue loses what it holds when the process ends; it suits tests, and
// receivers that accept the loss.
//
// The server does send a delivery again when the exchange ends without an
// answer. So when the queue cannot store a delivery within StoreTimeout (8 s
// by default) — an engine unreachable or stalled, a full disk, a bound
// reached — the handler reads the body and closes the connection without
// answering; the server sends the same body later, and counts it in
// Stats.AskedAgain. Options.Answer503 answers 503 instead, which the server
// takes as final.
//
// # Serving and stopping
//
// ListenAndServe (or Serve, on a listener) runs a Handler with the read
// timeouts the sender's 10 s call for, its health at /healthz, and the stop
// sequence that loses nothing: when its context ends, Handler.Shutdown stops
// admitting (deliveries arriving then are asked for again), waits for the
// stores in flight and stops the workers; then the server closes. Close the
// queue after it returns. NewServer makes such a server for your own mux.
//
// Handler.Health reports whether the handler can admit deliveries (its
// queue is reachable, the state of its engine present, no bound reached)
// and whether it makes progress (not when deliveries wait and none was
// handled for ProgressTimeout, nor while a delivery has failed
// StuckAttempts attempts in a row: Health.Failing names it and the object
// it holds back); HealthHandler serves it as JSON. Every failed attempt is
// logged, through slog.Default unless Options.Logger is set. A queue whose
// engine can forget what it stored reports it (LossReporter); the handler
// then calls Options.OnLoss (catchup.OnLoss catches up from the last time
// the engine was known to be good), and is unhealthy until that succeeds.
//
// Handling is at least once. A delivery leaves the queue when its callback
// returns nil; an error or a panic is retried with a wait that doubles from
// RetryMin up to RetryMax, and after MaxAttempts the delivery is
// dead-lettered, for you to list (Handler.DeadLetters), requeue or delete.
// A crash during a callback runs it again after the restart. DeliveryFrom
// gives a callback its delivery's dedup key and attempt number, to make it
// idempotent.
//
// Deliveries of one issue or merge request (their notes included), of one
// build, or pushes to one branch are handled one at a time, in the order
// they arrived, even with several workers; one waiting for a retry holds
// back the later ones of its object. Other deliveries run in parallel,
// oldest first. Handler.WaitIdle waits until every stored delivery is
// handled or dead-lettered, which is what a test needs after delivering.
//
// Because the server sends no delivery id and repeats a body after a
// timeout, the queue remembers each delivery's DedupKey for a window (7 days
// by default) and does not store a repeat. A key is recorded only when its
// delivery is stored, so a delivery asked for again is not taken for a
// repeat when it is sent again. A delivery asked for again arrives at least
// 16 s late, often after later events of its object: Delivery.Superseded
// tells a callback that a later state of its issue or merge request was
// already handled.
//
// # Catching up
//
// What the server sends while no receiver runs is lost. Package
// github.com/collabsvc/collab/webhook/catchup reads what changed meanwhile
// from the API and stores it in a Handler, through Handler.Synthetic, as
// synthesized events (Delivery.Synthesized and Delivery.Record) that the same
// callbacks handle; what the receiver already has is skipped by dedup key.
//
// Several receivers behind a load balancer share one queue, with its dedup
// keys and checkpoints, through package
// github.com/collabsvc/collab/redis/redisqueue.
package webhook
