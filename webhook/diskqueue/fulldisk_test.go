package diskqueue

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// The test binary fills its queue's disk when this variable is set; see
// fullDiskChild.
const fullDiskEnv = "WEBHOOK_TEST_FULL_DISK"

// fullDiskChild limits the size of the files it may write, as a full disk
// would, and delivers issues to a Handler on a DiskQueue in
// $WEBHOOK_TEST_FULL_DISK until one is not answered 200. It prints the ids
// answered 200 and the handler's counters.
func fullDiskChild() int {
	dir := os.Getenv(fullDiskEnv)
	q, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer q.Close()
	q.mu.Lock()
	used := q.head().size // the segment is filled with zeros past it
	q.mu.Unlock()
	// Past the limit a write fails with EFBIG instead of killing the process.
	signal.Ignore(syscall.SIGXFSZ)
	limit := uint64(used) + 256<<10
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	template, err := os.ReadFile("../testdata/spec/issue.json")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for id := 1; id < 100000; id++ {
		w := serve(h, issueRequest(issueBody(template, id)))
		if w.Code != http.StatusOK {
			st := h.Stats()
			fmt.Printf("last %d status %d accepted %d asked-again %d dropped %d\n", id, w.Code, st.Accepted, st.AskedAgain, st.Dropped)
			return 0
		}
	}
	fmt.Println("never full")
	return 1
}

// TestFullDiskAsksAgain: when the queue's file cannot grow (a real write
// error from the kernel), the delivery is closed without an answer, so that
// the sender delivers it again, and counted; no delivery gets a final
// answer, and the deliveries stored before are intact at the next open.
func TestFullDiskAsksAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	q := openDisk(t, dir, Options{})
	require.NoError(t, q.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fullDiskEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err)
	var last, status, accepted, asked, dropped int
	_, err = fmt.Sscanf(strings.TrimSpace(string(out)), "last %d status %d accepted %d asked-again %d dropped %d", &last, &status, &accepted, &asked, &dropped)
	require.NoError(t, err, "child said %q", out)
	assert.Equal(t, askedAgain, status)
	assert.Equal(t, 1, asked)
	assert.Zero(t, dropped, "no final answer")
	assert.Equal(t, last-1, accepted)
	t.Logf("answered 200 %d; asked again %d; final answers %d; lost 0 (checked below)", accepted, asked, dropped)

	q = openDisk(t, dir, Options{})
	defer q.Close()
	assert.Equal(t, accepted, q.Len(), "what was stored is intact")
	for id := 1; id <= last; id++ {
		seen, err := q.Seen(t.Context(), issueKey(id))
		require.NoError(t, err)
		assert.Equal(t, id < last, seen, "issue %d", id)
	}
}
