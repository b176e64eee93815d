package diskqueue_test

import (
	"context"
	"fmt"
	"os"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// A queue on disk, bounded, whose state a health check or a gauge reads.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "hooks") // in production: a directory of its own, such as /var/lib/mybot/queue
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	q, err := diskqueue.Open(dir, diskqueue.Options{MaxPending: 10000, MaxBytes: 256 << 20})
	if err != nil {
		panic(err) // a damaged or locked queue is an error, never a silent reset
	}
	defer q.Close()

	ctx := context.Background()
	d := &webhook.Delivery{Key: "issue/1/2016-06-21T09:14:07Z", Kind: webhook.KindIssue, Body: []byte(`{"object_kind":"issue"}`)}
	fmt.Println("stored:", q.Put(ctx, d))
	fmt.Println("again:", q.Put(ctx, d))
	st, err := q.Stats(ctx)
	fmt.Println("pending:", st.Pending, err)
	fmt.Println("ready:", q.Check(ctx))
	// Output:
	// stored: <nil>
	// again: webhook: duplicate delivery
	// pending: 1 <nil>
	// ready: <nil>
}

// After a burst, give the file's space back while the receiver is quiet.
// The queue also does this by itself whenever it is drained.
func ExampleQueue_Compact() {
	dir, err := os.MkdirTemp("", "hooks")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	q, err := diskqueue.Open(dir, diskqueue.Options{})
	if err != nil {
		panic(err)
	}
	defer q.Close()
	fmt.Println(q.Compact())
	// Output: <nil>
}
