package webhook

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Delivery is one accepted delivery as a Queue keeps it: what arrived, and
// how far its handling has come.
type Delivery struct {
	// ID is assigned by the queue on Put; it grows in arrival order.
	ID uint64 `json:"id"`
	// Key is the delivery's dedup key (see DedupKey).
	Key string `json:"key"`
	// StateKey names the state of the object the event reports, such as
	// "issue/12/2016-06-21T09:14:07Z", when Key is more precise than that. A
	// queue remembers it beside Key, so that catch-up, which knows only the
	// state, finds the delivery; it is never checked for duplicates itself.
	StateKey string `json:"state_key,omitempty"`
	// Partition names the object whose events keep their order, such as
	// "issue/12", "merge_request/7" or "build/42"; "" for none.
	Partition string `json:"partition,omitempty"`
	// Kind is the event kind, from the X-Gitlab-Event header or the body.
	Kind Kind `json:"kind"`
	// ReceivedAt is when the delivery arrived.
	ReceivedAt time.Time `json:"received_at"`
	// Header holds the request headers, with the secret token removed.
	Header http.Header `json:"headers"`
	// Body is the request body, byte for byte.
	Body []byte `json:"body"`
	// Attempt counts the handlings started, this one included: 1 the first
	// time. A handling cut short by a crash counts.
	Attempt int `json:"attempt"`
	// LastError is the error of the latest failed attempt, if any.
	LastError string `json:"last_error,omitempty"`
	// Synthesized marks an event built by catch-up from an API record
	// rather than received from the server; Record holds that record.
	Synthesized bool   `json:"synthesized,omitempty"`
	Record      []byte `json:"record,omitempty"`
	// Superseded is set, while a callback handles an issue or merge request
	// event, when this Handler already handled a later state of the same
	// object (a later updated_at). A delivery the server sends again after a
	// failure arrives at least 16 s late, often after later events of its
	// object: its event is then an old state, and the object has changed
	// since. The Handler knows the states it handled since it started.
	Superseded bool `json:"-"`

	// event is Body decoded, when the delivery has not left this process;
	// it spares the workers a second decoding.
	event Event
}

// Queue keeps accepted deliveries until their callbacks succeed. It hands
// them out under a lease: a delivery taken and neither acked, retried nor
// dead-lettered is handed out again after a restart, or when its lease
// expires in a queue shared by several receivers. Implementations are safe
// for concurrent use.
type Queue interface {
	// Put stores d and sets d.ID. When Put returns nil the delivery is kept
	// across a crash (for a durable queue). If a delivery whose Key or
	// StateKey equals d.Key was stored within the queue's dedup window, Put
	// stores nothing and returns ErrDuplicate. ErrQueueFull means a bound set by the user is
	// reached.
	Put(ctx context.Context, d *Delivery) error
	// Take blocks until a delivery is ready and leases it. A delivery is ready
	// when its retry time has come and no earlier delivery of its Partition
	// is still pending, leased or waiting for a retry. Take returns
	// ErrQueueClosed once Close was called.
	Take(ctx context.Context) (*Delivery, error)
	// Ack removes a leased delivery for good: its callback succeeded.
	Ack(ctx context.Context, id uint64) error
	// Retry ends the lease of a delivery whose callback failed; it is ready
	// again at the given time, still ahead of the later deliveries of its
	// partition. reason is kept as LastError.
	Retry(ctx context.Context, id uint64, at time.Time, reason string) error
	// DeadLetter moves a leased delivery out of the way after its last
	// attempt; the later deliveries of its partition go on.
	DeadLetter(ctx context.Context, id uint64, reason string) error
	// DeadLetters lists the dead-lettered deliveries, oldest first.
	DeadLetters(ctx context.Context) ([]*Delivery, error)
	// Requeue puts a dead-lettered delivery back, with its attempts reset,
	// behind the pending deliveries of its partition.
	Requeue(ctx context.Context, id uint64) error
	// Delete removes a dead-lettered delivery.
	Delete(ctx context.Context, id uint64) error
	// Seen reports whether a delivery with this key was stored within the
	// dedup window (handled, pending or dead-lettered).
	Seen(ctx context.Context, key string) (bool, error)
	// Checkpoint returns the value stored under name, or nil; catch-up keeps
	// its progress there.
	Checkpoint(ctx context.Context, name string) ([]byte, error)
	// SetCheckpoint stores value under name, durably.
	SetCheckpoint(ctx context.Context, name string, value []byte) error
	// Stats returns the queue's state now: what it holds, how old the
	// oldest pending delivery is, and what it found damaged.
	Stats(ctx context.Context) (QueueStats, error)
	// Check reports whether the queue can store a delivery now: its store is
	// reachable, the state its engine keeps (a stream, a consumer group) is
	// present, and no bound is reached. It returns nil when it can; a bound
	// reached is an error wrapping ErrQueueFull.
	Check(ctx context.Context) error
	// Close releases the queue; blocked Takes return ErrQueueClosed.
	Close() error
}

// LossReporter is implemented by a queue whose engine can lose what it had
// stored and acknowledged: a server restarted with an empty data set, or a
// failover to a replica that lagged. Each value sent on Losses is the last
// time the engine was known to hold its state; the Handler answers it with
// Options.OnLoss, a catch-up from that time.
type LossReporter interface {
	Losses() <-chan time.Time
}

// The errors of a Queue.
var (
	ErrDuplicate   = errors.New("webhook: duplicate delivery")
	ErrQueueFull   = errors.New("webhook: queue full")
	ErrQueueClosed = errors.New("webhook: queue closed")
	// ErrNotLeased: Ack, Retry or DeadLetter named a delivery that is not
	// leased.
	ErrNotLeased = errors.New("webhook: delivery not leased")
	// ErrNotDeadLettered: Requeue or Delete named a delivery that is not
	// dead-lettered.
	ErrNotDeadLettered = errors.New("webhook: delivery not dead-lettered")
)

type deliveryKey struct{}

// withDelivery returns ctx carrying d, for the callbacks.
func withDelivery(ctx context.Context, d *Delivery) context.Context {
	return context.WithValue(ctx, deliveryKey{}, d)
}

// DeliveryFrom returns the delivery a callback is handling: its dedup key,
// its attempt number, and whether catch-up synthesized it. It returns nil
// outside a callback.
func DeliveryFrom(ctx context.Context) *Delivery {
	d, _ := ctx.Value(deliveryKey{}).(*Delivery)
	return d
}

// DedupKeys are the keys a queue remembers for d: Key, and StateKey when
// it differs.
func (d *Delivery) DedupKeys() []string {
	var keys []string
	for _, k := range [...]string{d.Key, d.StateKey} {
		if k != "" && (len(keys) == 0 || keys[0] != k) {
			keys = append(keys, k)
		}
	}
	return keys
}
