// Command collabfake serves the collabtest fake Collaboration Service on an
// address, for scripts, clients in other languages and manual tries.
//
//	go run ./cmd/collabfake -addr 127.0.0.1:8081 -token secret -seed -log
//
// It prints its base URL and the administrator's token, serves until
// SIGINT or SIGTERM, then stops cleanly with exit status 0. Run it with -h
// for every flag.
package main

import (
	"context"
	"os"

	"github.com/collabsvc/collab/collabtest/fakecmd"
)

func main() {
	os.Exit(fakecmd.Main(context.Background(), "collabfake", os.Args[1:], os.Stdout, os.Stderr))
}
