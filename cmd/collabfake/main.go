// Command collabfake serves the collabtest fake Collaboration Service on an
// address, for scripts in other languages and for manual tries.
//
//	go run ./cmd/collabfake -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/collabsvc/collab/collabtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	srv, err := collabtest.Listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "collabfake:", err)
		os.Exit(1)
	}
	fmt.Printf("collabfake serving %s/api/v3\nadmin private token: %s\n", srv.URL, srv.AdminToken)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	srv.Close()
	fmt.Println("collabfake stopped")
}
