package collab_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// Download a build's artifacts straight to a file: the body streams from the
// server to disk and is never held in memory, however large it is.
func ExampleBuildsService_OpenArtifacts() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	project := srv.Seed.Project(srv.Admin, "demo", collab.PrivateVisibility)
	pid := project.ID
	bid := srv.Seed.Build(project, collabtest.BuildSpec{Status: "success", Artifacts: []byte("PK\x03\x04 not really a zip")}).ID

	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	dl, _, err := c.Builds.OpenArtifacts(ctx, pid, bid)
	if err != nil {
		log.Fatal(err) // errors.Is(err, collab.ErrNotFound) when the build has none
	}
	defer dl.Close()

	dir, err := os.MkdirTemp("", "artifacts")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// dl.Filename is reduced to a base name, so joining it is safe.
	f, err := os.Create(filepath.Join(dir, dl.Filename))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	n, err := io.Copy(f, dl)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("saved %s: %d of %d bytes\n", dl.Filename, n, dl.Size)
	// Output:
	// saved artifacts.zip: 21 of 21 bytes
}

// List the builds that still need attention, then retry the failed one.
func ExampleBuildsService_List() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	project := srv.Seed.Project(srv.Admin, "demo", collab.PrivateVisibility)
	pid := project.ID
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "lint", Status: "success"})
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Status: "failed", Commands: "make test"})
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "deploy", Stage: "deploy", Status: "running"})

	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	builds, _, err := c.Builds.List(ctx, pid, &collab.ListBuildsOptions{
		Scope: collab.BuildScopes{collab.BuildFailed, collab.BuildRunning},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, b := range builds {
		fmt.Println(b.Name, b.Status)
		if b.Status == collab.BuildFailed {
			nb, _, err := c.Builds.Retry(ctx, pid, b.ID)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("retried as a new build:", nb.Name, nb.Status, nb.ID != b.ID)
		}
	}
	// Output:
	// deploy running
	// rspec failed
	// retried as a new build: rspec pending true
}

// Stream a build's artifacts into any io.Writer, here a hash, without
// keeping the file.
func ExampleBuildsService_Artifacts() {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	project := srv.Seed.Project(srv.Admin, "demo", collab.PrivateVisibility)
	pid := project.ID
	bid := srv.Seed.Build(project, collabtest.BuildSpec{Status: "success", Artifacts: []byte("artifact bytes")}).ID
	none := srv.Seed.Build(project, collabtest.BuildSpec{Status: "success"}).ID

	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	h := sha256.New()
	if _, err := c.Builds.Artifacts(ctx, pid, bid, h); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sha256 %x\n", h.Sum(nil)[:8])

	_, err = c.Builds.Artifacts(ctx, pid, none, io.Discard)
	fmt.Println("no artifacts:", errors.Is(err, collab.ErrNotFound))
	// Output:
	// sha256 4659fc0570122b0e
	// no artifacts: true
}
