package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// fakeIssuesEnv makes the test binary serve a fake with that many issues
// instead of running tests, so that the server's memory is not counted in
// the heap of the command under test.
const fakeIssuesEnv = "COLLAB_TEST_FAKE_ISSUES"

// serveFakeIssues serves a fake whose project 3 (printed with the URL and
// token) holds n issues, until standard input closes.
func serveFakeIssues(n string) int {
	count, err := strconv.Atoi(n)
	if err != nil {
		return 2
	}
	srv, err := collabtest.NewServer()
	if err != nil {
		return 1
	}
	defer srv.Close()
	p := srv.Seed.Project(srv.Admin, "big", collab.PrivateVisibility)
	for i := 1; i <= count; i++ {
		srv.Seed.Issue(p, srv.Admin, "issue "+strconv.Itoa(i)+" with a title long enough to look like a real one")
	}
	if srv.Err() != nil {
		return 1
	}
	os.Stdout.WriteString(srv.URL + " " + srv.AdminToken + " " + strconv.Itoa(p.ID) + "\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// lineCounter counts lines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += strings.Count(string(p), "\n")
	return len(p), nil
}

// ndjsonPeakHeap runs collab api --paginate --ndjson over n issues served by
// another process and returns the peak heap in use above the baseline.
func ndjsonPeakHeap(t *testing.T, n int) uint64 {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeIssuesEnv+"="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("fake server: %v", err)
	}
	f := strings.Fields(line)
	t.Setenv("COLLAB_URL", f[0])
	t.Setenv("COLLAB_TOKEN", f[1])

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	out := &lineCounter{}
	var errOut strings.Builder
	code := run(context.Background(), []string{"api", "--paginate", "--ndjson", "projects/" + f[2] + "/issues"}, stdio{in: strings.NewReader(""), out: out, err: &errOut})
	close(stop)
	wg.Wait()
	if code != 0 || out.n != n {
		t.Fatalf("exit %d, %d lines for %d issues; stderr: %s", code, out.n, n, errOut.String())
	}
	if peak.Load() < base {
		return 0
	}
	return peak.Load() - base
}

// TestNDJSONMemoryBounded checks that --ndjson holds about a page at a
// time: the peak heap over 10,000 issues stays near the peak over 1,000.
func TestNDJSONMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("serves 11,000 issues")
	}
	small := ndjsonPeakHeap(t, 1000)
	large := ndjsonPeakHeap(t, 10000)
	t.Logf("peak heap in use above baseline: %d KiB for 1,000 issues, %d KiB for 10,000", small>>10, large>>10)
	// Ten times the items may not cost anything like ten times the memory:
	// allow GC timing noise, not growth with the count.
	if limit := 2*small + 4<<20; large > limit {
		t.Errorf("peak heap %d KiB for 10,000 issues is above %d KiB: it grows with the count", large>>10, limit>>10)
	}
}
