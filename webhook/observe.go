package webhook

import (
	"context"
	"net/http"
	"time"
)

// Outcome is what became of a delivery that reached the Handler.
type Outcome string

// The outcomes of a delivery's admission.
const (
	OutcomeAccepted   Outcome = "accepted"    // stored, answered 200
	OutcomeDuplicate  Outcome = "duplicate"   // seen before, answered 200, not stored
	OutcomeIgnored    Outcome = "ignored"     // no callback wants its kind, answered 200
	OutcomeRejected   Outcome = "rejected"    // bad method, token, size or body, answered 4xx
	OutcomeAskedAgain Outcome = "asked_again" // not stored: closed without an answer, so the sender delivers it again
	OutcomeRefused    Outcome = "refused"     // not stored, answered 503, which the sender takes as final
)

// HandleOutcome is how one handling of a stored delivery ended.
type HandleOutcome string

// The outcomes of a handling.
const (
	HandleDone       HandleOutcome = "done"        // the callback returned nil; the delivery left the queue
	HandleRetry      HandleOutcome = "retry"       // the callback failed; it will be tried again
	HandleDeadLetter HandleOutcome = "dead_letter" // the callback failed its last attempt, or the delivery was damaged
)

// CatchUpReport is one catch-up run over one project.
type CatchUpReport struct {
	Project string        // the project, as the caller named it
	Changes int           // changes found and stored as synthesized events
	Lag     time.Duration // how far behind the newest change the checkpoint was when the run began
	Err     error
}

// Observer watches a Handler, for tracing and metrics; set it in
// Options.Observer. Its methods are called from many goroutines at once and
// must not block.
type Observer interface {
	// DeliveryReceived runs as a delivery arrives; the context it returns
	// (carrying a span, say) is used while the delivery is admitted.
	DeliveryReceived(ctx context.Context, r *http.Request) context.Context
	// DeliveryAdmitted runs once admission is decided. Before a delivery is
	// stored, Inject may add headers (a trace context) to keep with it.
	DeliveryAdmitted(ctx context.Context, kind Kind, outcome Outcome)
	// Inject adds to h what a later handling needs to link back to the
	// admission (a trace context); h is stored with the delivery.
	Inject(ctx context.Context, h http.Header)
	// HandlingStarted runs before a callback; the context it returns is the
	// callback's, so that API calls made with it are children of its span.
	HandlingStarted(ctx context.Context, d *Delivery) context.Context
	// HandlingEnded runs after the callback, with the context HandlingStarted
	// returned.
	HandlingEnded(ctx context.Context, d *Delivery, outcome HandleOutcome, took time.Duration, err error)
	// CatchUpEnded runs after each catch-up run of one project.
	CatchUpEnded(ctx context.Context, r CatchUpReport)
}

// QueueStats is a queue's state at one moment, for gauges and health.
type QueueStats struct {
	Pending     int       `json:"pending"`      // deliveries stored and not yet handled, leased ones included
	Oldest      time.Time `json:"oldest"`       // arrival of the oldest pending delivery; zero when none
	DeadLetters int       `json:"dead_letters"` // deliveries dead-lettered and kept
	Damaged     int64     `json:"damaged"`      // stored deliveries or dedup entries found damaged (a checksum that fails) since the queue was opened; a damaged delivery is dead-lettered
}
