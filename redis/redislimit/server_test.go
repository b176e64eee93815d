package redislimit_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server of the test's own, on a free loopback
// port, with its files in a temporary directory.
type redisServer struct {
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts a redis-server and stops it when the test ends.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found; install the Debian package redis-server to run these tests")
	}
	for try := 0; try < 3; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		s := &redisServer{Addr: "127.0.0.1:" + strconv.Itoa(port), done: make(chan struct{})}
		s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", t.TempDir(),
			"--save", "", "--appendonly", "no")
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		go func() { _ = s.cmd.Wait(); close(s.done) }()
		if s.ready() {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop()
	}
	t.Fatal("redis-server did not start")
	return nil
}

func (s *redisServer) ready() bool {
	rdb := s.Client()
	defer rdb.Close()
	for range 200 {
		select {
		case <-s.done:
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

// Client returns a new client of the server.
func (s *redisServer) Client() *redis.Client { return redis.NewClient(&redis.Options{Addr: s.Addr}) }

// Stop kills the server and waits for it to exit.
func (s *redisServer) Stop() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func (s *redisServer) String() string { return fmt.Sprintf("redis-server at %s", s.Addr) }
