package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab/collabtest"
)

// pageLatency is what each page costs at the server in the benchmark.
const pageLatency = 20 * time.Millisecond

// curlLoop is what a script does without collab: one curl per page,
// following X-Next-Page, the pages' arrays concatenated.
const curlLoop = `set -eu
page=1
: > "$OUT"
while [ -n "$page" ]; do
  curl -sS -f -D "$HDR" -H @"$TOKFILE" "$URL/api/v3/projects/$PID/issues?per_page=100&page=$page" >> "$OUT"
  page=$(tr -d '\r' < "$HDR" | awk -F': ' 'tolower($1)=="x-next-page"{print $2}')
done
`

// BenchmarkPaginate compares, in one run, collab api --paginate (with its
// default prefetch) and a sequential curl loop over 50 pages of 100 issues
// with 20 ms of latency per page, and checks that both print the same
// items (after jq -S).
func BenchmarkPaginate(b *testing.B) {
	for _, tool := range []string{"curl", "jq"} {
		needTool(b, tool)
	}
	for _, tool := range []string{"bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("%s is not installed: skipping the comparison with a curl loop", tool)
		}
	}
	srv := collabtest.NewTestServer(b)
	pid := srv.AddProject(srv.AdminID, "bench", 0)
	for i := 1; i <= 5000; i++ {
		srv.AddIssue(pid, srv.AdminID, "issue "+strconv.Itoa(i))
	}
	target, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(pageLatency)
		proxy.ServeHTTP(w, r)
	}))
	defer slow.Close()

	dir := b.TempDir()
	bin := filepath.Join(dir, "collab")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	tokFile := filepath.Join(dir, "token-header")
	if err := os.WriteFile(tokFile, []byte("PRIVATE-TOKEN: "+srv.AdminToken+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "COLLAB_URL="+slow.URL, "COLLAB_TOKEN="+srv.AdminToken,
		"URL="+slow.URL, "PID="+strconv.Itoa(pid), "TOKFILE="+tokFile, "HDR="+filepath.Join(dir, "headers"))
	collabOut, curlOut := filepath.Join(dir, "collab.json"), filepath.Join(dir, "curl.json")
	runCollab := func() {
		cmd := exec.Command(bin, "api", "--paginate", "projects/"+strconv.Itoa(pid)+"/issues")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("collab: %v", err)
		}
		if err := os.WriteFile(collabOut, out, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	runCurl := func() {
		cmd := exec.Command("bash", "-c", curlLoop)
		cmd.Env = append(env, "OUT="+curlOut)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("curl loop: %v\n%s", err, out)
		}
	}

	var perOp [2]time.Duration
	b.Run("collab-paginate", func(b *testing.B) {
		for b.Loop() {
			runCollab()
		}
		perOp[0] = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("curl-loop", func(b *testing.B) {
		for b.Loop() {
			runCurl()
		}
		perOp[1] = b.Elapsed() / time.Duration(b.N)
	})
	if perOp[0] > 0 {
		b.Logf("collab api --paginate %v, curl loop %v: %.1fx faster", perOp[0], perOp[1], float64(perOp[1])/float64(perOp[0]))
	}

	// Same items, byte for byte, once both are sorted by jq -S.
	a, err := exec.Command("jq", "-S", ".", collabOut).Output()
	if err != nil {
		b.Fatalf("jq: %v", err)
	}
	c, err := exec.Command("jq", "-S", "-s", "add", curlOut).Output()
	if err != nil {
		b.Fatalf("jq: %v", err)
	}
	if !bytes.Equal(a, c) || len(a) < 5000 {
		b.Fatalf("collab and the curl loop differ after jq -S (%d and %d bytes)", len(a), len(c))
	}
	b.Logf("identical after jq -S: %d bytes, 5000 issues", len(a))
}

// BenchmarkIssueListJSON compares the typed command and the raw one over
// the same 10 pages of 100 issues from the fake, alternated in each
// iteration so that both see the same load: collab issue list --paginate
// --json decodes every issue into its record and encodes it again, collab
// api --paginate copies the bytes of each item. The target is at most
// 1.1x; the ratio is reported as the metric typed/raw.
func BenchmarkIssueListJSON(b *testing.B) {
	srv := collabtest.NewTestServer(b)
	pid := srv.AddProject(srv.AdminID, "bench", 0)
	for i := 1; i <= 1000; i++ {
		srv.AddIssue(pid, srv.AdminID, "issue "+strconv.Itoa(i), "bug")
	}
	b.Setenv("COLLAB_URL", srv.URL)
	b.Setenv("COLLAB_TOKEN", srv.AdminToken)
	project := strconv.Itoa(pid)
	raw := []string{"api", "--paginate", "projects/" + project + "/issues"}
	typed := []string{"issue", "list", "-R", project, "--paginate", "--json"}
	var spent [2]time.Duration
	var out [2]countingWriter
	for b.Loop() {
		for i, args := range [][]string{raw, typed} {
			out[i] = 0
			start := time.Now()
			if code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out[i], err: io.Discard}); code != 0 {
				b.Fatalf("%v: exit %d", args, code)
			}
			spent[i] += time.Since(start)
		}
	}
	if out[0] == 0 || out[1] < out[0] {
		b.Fatalf("printed %d and %d bytes: the typed command should print at least every item's bytes", out[0], out[1])
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "typed-ns/op")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "typed/raw")
}

// countingWriter counts what is written to it.
type countingWriter int

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
