// Package redistest runs a redis-server of a test's own, for the tests of
// the packages of this module. On a machine without redis-server the test
// skips, naming the Debian package that installs it; where the environment
// variable CI is set it fails instead, so that CI cannot pass by skipping.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server of the test's own, on a loopback port, with
// its files in a temporary directory; it is stopped when the test ends.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	aof  bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error
}

// Start starts a server; aof turns on the append-only file with fsync
// every second, as the README advises.
func Start(t testing.TB, aof bool) *Server {
	t.Helper()
	s := &Server{t: t, bin: serverPath(t), dir: t.TempDir(), aof: aof}
	for try := 0; ; try++ {
		s.port = freePort(t)
		if s.start() {
			break
		}
		if try == 2 {
			t.Fatal("redis-server did not start")
		}
	}
	t.Cleanup(s.Kill)
	return s
}

// serverPath is the path of redis-server, or ends the test without it.
func serverPath(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err == nil {
		return bin
	}
	const msg = "redis-server not found: install the Debian package redis-server (apt-get install redis-server jq curl)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI is set, so a missing program fails the test")
	}
	t.Skip(msg)
	return ""
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Client returns a client of the server, closed when the test ends; opts
// may set timeouts.
func (s *Server) Client(opts *redis.Options) *redis.Client {
	if opts == nil {
		opts = &redis.Options{}
	}
	opts.Addr = s.Addr()
	rdb := redis.NewClient(opts)
	s.t.Cleanup(func() { rdb.Close() })
	return rdb
}

// start runs the server on s.port and waits until it answers; false when
// it exited first (the port was taken).
func (s *Server) start() bool {
	aof := "no"
	if s.aof {
		aof = "yes"
	}
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--appendonly", aof, "--appendfsync", "everysec", "--protected-mode", "yes")
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr()})
	defer rdb.Close()
	if !ready(rdb, exited) {
		_ = cmd.Process.Kill()
		<-exited
		return false
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return true
}

// Kill stops the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT) // a stopped process dies only once continued
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

// Restart starts the server again on the same port and files; empty
// removes its files first, so that it comes back with no data.
func (s *Server) Restart(empty bool) {
	s.t.Helper()
	s.Kill()
	if empty {
		if err := os.RemoveAll(s.dir); err != nil {
			s.t.Fatal(err)
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			s.t.Fatal(err)
		}
	}
	if !s.start() {
		s.t.Fatal("redis-server did not start again")
	}
}

// Copy returns a directory holding a copy of the server's files as they
// are now, for RestartFrom: its append-only file, or without one a
// snapshot the server saves first.
func (s *Server) Copy() string {
	s.t.Helper()
	if !s.aof {
		if err := s.Client(nil).Save(context.Background()).Err(); err != nil {
			s.t.Fatalf("saving a snapshot: %v", err)
		}
	}
	dst := s.t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(s.dir)); err != nil {
		s.t.Fatalf("copying the server's files: %v", err)
	}
	return dst
}

// RestartFrom kills the server and starts it again on the same port from
// the files Copy returned, as after a crash that lost what was written
// since: a snapshot older than the last writes, or an append-only file
// whose tail was cut off.
func (s *Server) RestartFrom(files string) {
	s.t.Helper()
	s.Kill()
	if err := os.RemoveAll(s.dir); err != nil {
		s.t.Fatal(err)
	}
	if err := os.CopyFS(s.dir, os.DirFS(files)); err != nil {
		s.t.Fatalf("restoring the server's files: %v", err)
	}
	if !s.start() {
		s.t.Fatal("redis-server did not start again")
	}
}

// Signal sends sig (SIGSTOP, SIGCONT) to the server.
func (s *Server) Signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatal(err)
	}
}

// ready waits for the server to answer PING, or to exit (port taken).
func ready(rdb *redis.Client, exited chan error) bool {
	for range 200 {
		select {
		case err := <-exited:
			exited <- err
			return false
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return true
		}
		time.Sleep(25 * time.Millisecond)
	}
	return false
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
