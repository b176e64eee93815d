// Command quickstart runs the main job of the SDK against the embedded fake
// server, or against a real one when COLLAB_URL and COLLAB_TOKEN are set.
package main

import (
	"fmt"
	"os"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func main() {
	base, token := os.Getenv("COLLAB_URL"), os.Getenv("COLLAB_TOKEN")
	if base == "" || token == "" {
		srv := collabtest.NewServer()
		defer srv.Close()
		base, token = srv.URL, srv.AdminToken
	}
	c, err := collab.NewClient(base, collab.WithPrivateToken(token))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("client ready for", c.BaseURL())
}
