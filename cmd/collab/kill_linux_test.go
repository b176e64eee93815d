package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

func init() {
	extraCmds["listen-blocked"] = cmdListenBlocked
	extraCmds["listen-kill"] = cmdListenKill
	extraCmds["listen-resume"] = cmdListenResume
}

// blockedListener is a collab hook listen whose standard output is a pipe
// that nobody reads.
type blockedListener struct {
	cmd  *exec.Cmd
	pipe *os.File // the read end, kept open and unread
}

// blockedKey finds the script's blocked listener among its values.
type blockedKey struct{}

// listenCommand makes a collab hook listen command for the script.
func listenCommand(ts *testscript.TestScript, addr, dir string) *exec.Cmd {
	var bin string
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(d, "collab"); fileExists(p) {
			bin = p
			break
		}
	}
	if bin == "" {
		ts.Fatalf("collab is not on the script's PATH")
	}
	cmd := exec.Command(bin, "hook", "listen", "--addr", addr, "--queue", ts.MkAbs(dir))
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"))
	stderr, err := os.Create(ts.MkAbs("listener-" + strconv.Itoa(int(time.Now().UnixNano())) + ".err"))
	ts.Check(err)
	cmd.Stderr = stderr
	return cmd
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// listen-blocked ADDR DIR starts collab hook listen --queue DIR with its
// standard output a pipe of one page that nobody reads: it fills after a
// few lines, and the listener's worker blocks writing while its handler
// goes on storing deliveries.
func cmdListenBlocked(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: listen-blocked ADDR DIR")
	}
	r, w, err := os.Pipe()
	ts.Check(err)
	if _, err := unix.FcntlInt(r.Fd(), unix.F_SETPIPE_SZ, 4096); err != nil {
		ts.Fatalf("F_SETPIPE_SZ: %v", err)
	}
	cmd := listenCommand(ts, args[0], args[1])
	cmd.Stdout = w
	ts.Check(cmd.Start())
	ts.Check(w.Close()) // the child holds the only write end
	ts.Value(blockedKey{}).(*blockedListener).cmd = cmd
	ts.Value(blockedKey{}).(*blockedListener).pipe = r
}

// listen-kill OUT kills the blocked listener with SIGKILL, then reads what
// it had written to the pipe into OUT.
func cmdListenKill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: listen-kill OUT")
	}
	bl := ts.Value(blockedKey{}).(*blockedListener)
	ts.Check(bl.cmd.Process.Signal(syscall.SIGKILL))
	_ = bl.cmd.Wait()
	b, err := io.ReadAll(bl.pipe)
	ts.Check(err)
	ts.Check(bl.pipe.Close())
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
	ts.Logf("the killed listener had written %d bytes, %d newlines", len(b), strings.Count(string(b), "\n"))
}

// listen-resume ADDR DIR N BEFORE OUT restarts collab hook listen on DIR,
// reading its output into OUT until BEFORE and OUT together hold N
// distinct deliveries, then stops it with SIGINT.
func cmdListenResume(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: listen-resume ADDR DIR N BEFORE OUT")
	}
	want, err := strconv.Atoi(args[2])
	ts.Check(err)
	seen := map[string]bool{}
	count := func(line string) {
		var ev eventLine
		if json.Unmarshal([]byte(line), &ev) == nil && len(ev.Body) > 0 {
			seen[string(ev.Body)] = true
		}
	}
	// The pipe may end in the middle of the line being written at the kill:
	// that delivery was not acked, and comes again.
	for _, l := range strings.Split(ts.ReadFile(args[3]), "\n") {
		count(l)
	}
	before := len(seen)
	if before >= want {
		ts.Fatalf("the killed listener had printed all %d deliveries: its output was not blocked", before)
	}
	cmd := listenCommand(ts, args[0], args[1])
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	out, err := os.Create(ts.MkAbs(args[4]))
	ts.Check(err)
	defer out.Close()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timeout := time.After(waitLimit)
	for len(seen) < want {
		select {
		case l, ok := <-lines:
			if !ok {
				ts.Fatalf("the listener stopped with %d of %d deliveries", len(seen), want)
			}
			_, err := out.WriteString(l + "\n")
			ts.Check(err)
			count(l)
		case <-timeout:
			_ = cmd.Process.Kill()
			ts.Fatalf("after %v: %d of %d deliveries", waitLimit, len(seen), want)
		}
	}
	ts.Check(cmd.Process.Signal(os.Interrupt))
	for range lines {
	}
	ts.Check(cmd.Wait())
	ts.Logf("%d deliveries printed before the kill, %d in all after the restart", before, len(seen))
}
