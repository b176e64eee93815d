// Package exampleenv is the start the examples share: the server named by
// COLLAB_URL and COLLAB_TOKEN, or else an embedded fake server, seeded by the
// example, so that each example runs with no setup. Each example still makes
// its own client, as a program of yours would.
package exampleenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/collabsvc/collab/collabtest"
)

// Main runs an example's work with a minute to finish and, when it fails,
// prints the error after the example's name and exits with status 1.
func Main(name string, run func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err := run(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Env is the server an example works against.
type Env struct {
	// URL is COLLAB_URL, or the fake's address.
	URL string
	// Token is COLLAB_TOKEN, or the fake administrator's private token.
	Token string
	// Project is the project to work on (OpenProject only): COLLAB_PROJECT,
	// or the project the seed made.
	Project any
	// Fake is the embedded fake server, nil against a real one.
	Fake *collabtest.Server
}

// Open returns COLLAB_URL and COLLAB_TOKEN when both are set. Otherwise it starts the embedded fake server, says so on standard
// output, and fills it with seed (if not nil). Close stops the fake.
func Open(seed func(*collabtest.Server)) (*Env, error) {
	env, err := open(os.Getenv("COLLAB_URL"), os.Getenv("COLLAB_TOKEN"))
	if err == nil && env.Fake != nil && seed != nil {
		seed(env.Fake)
	}
	return env, err
}

// OpenProject is Open for an example that works on one project: the real
// server needs COLLAB_PROJECT too, and seed returns the fake's project.
func OpenProject(seed func(*collabtest.Server) int) (*Env, error) {
	base, token, project := os.Getenv("COLLAB_URL"), os.Getenv("COLLAB_TOKEN"), os.Getenv("COLLAB_PROJECT")
	if project == "" {
		base = "" // the fake, with the project seed makes
	}
	env, err := open(base, token)
	if err != nil {
		return nil, err
	}
	if env.Fake != nil {
		env.Project = seed(env.Fake)
	} else {
		env.Project = ProjectID(project)
	}
	return env, nil
}

// open names base with token, or, when either is empty, a new fake server.
func open(base, token string) (*Env, error) {
	env := &Env{URL: base, Token: token}
	if base == "" || token == "" {
		srv, err := collabtest.NewServer()
		if err != nil {
			return nil, err
		}
		env.Fake, env.URL, env.Token = srv, srv.URL, srv.AdminToken
		fmt.Println("using the embedded fake server at", env.URL)
	}
	return env, nil
}

// Close stops the embedded fake server, if any.
func (e *Env) Close() {
	if e.Fake != nil {
		e.Fake.Close()
	}
}

// ProjectID returns a project given as a numeric id or a "namespace/name"
// path in the form the client's methods take: an int for an id, else the
// path.
func ProjectID(s string) any {
	if id, err := strconv.Atoi(s); err == nil {
		return id
	}
	return s
}
