// Command collabfake serves the collabtest fake Collaboration Service on an
// address, for scripts in other languages and for manual tries.
//
//	go run ./cmd/collabfake -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/collabsvc/collab/collabtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve(ctx, *addr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "collabfake:", err)
		os.Exit(1)
	}
}

// serve runs the fake on addr until ctx ends, printing its URL and admin token.
func serve(ctx context.Context, addr string, out io.Writer) error {
	srv, err := collabtest.Listen(addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "collabfake serving %s/api/v3\nadmin private token: %s\n", srv.URL, srv.AdminToken)
	<-ctx.Done()
	srv.Close()
	fmt.Fprintln(out, "collabfake stopped")
	return nil
}
