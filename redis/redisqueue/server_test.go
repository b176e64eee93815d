package redisqueue_test

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis starts a redis-server of its own on a free loopback port, with
// its files in a temporary directory, and stops it when the test ends.
func startRedis(t testing.TB) *redis.Client {
	t.Helper()
	rdb, _ := runRedis(t)
	return rdb
}

// runRedis is startRedis that also returns a function killing the server.
func runRedis(t testing.TB) (*redis.Client, func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found; install the Debian package redis-server to run these tests")
	}
	for try := 0; ; try++ {
		port := freePort(t)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", t.TempDir(),
			"--save", "", "--appendonly", "no", "--protected-mode", "yes")
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
		if ready(rdb, exited) {
			var once sync.Once
			kill := func() {
				once.Do(func() {
					_ = cmd.Process.Kill()
					<-exited
				})
			}
			t.Cleanup(func() { rdb.Close(); kill() })
			return rdb, kill
		}
		rdb.Close()
		_ = cmd.Process.Kill()
		<-exited
		if try == 2 {
			t.Fatal("redis-server did not start")
		}
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
