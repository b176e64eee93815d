package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
)

// A runner registers with a registration token, checks that the server
// knows it, and unregisters when it stops. The runner token prints
// redacted.
func ExampleClient_RegisterRunner() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	rc, err := runner.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	reg, err := rc.RegisterRunner(ctx, srv.RunnersRegistrationToken(), &runner.RegisterRunnerOptions{
		Description: "docker-01", Tags: []string{"docker", "linux"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("registered, token", reg.Token)
	fmt.Println("alive:", rc.VerifyRunner(ctx, string(reg.Token)) == nil)

	if err := rc.DeleteRunner(ctx, string(reg.Token)); err != nil {
		log.Fatal(err)
	}
	err = rc.VerifyRunner(ctx, string(reg.Token))
	fmt.Println("removed:", errors.Is(err, collab.ErrForbidden))
	// Output:
	// registered, token [redacted]
	// alive: true
	// removed: true
}
