package cassette_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
)

// recorded records one call against a fresh fake and returns the
// cassette, as a file would give it back.
func recorded() (*cassette.Cassette, error) {
	dir, err := os.MkdirTemp("", "cassette")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "session.json")
	if err := recordOne(file); err != nil {
		return nil, err
	}
	return cassette.Load(file)
}

// recordOne records one call against a fresh fake into file.
func recordOne(file string) error {
	srv, err := collabtest.NewServer()
	if err != nil {
		return err
	}
	defer srv.Close()
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithHTTPClient(hc))
	if err != nil {
		return err
	}
	if _, _, err := c.Users.Current(context.Background()); err != nil {
		return err
	}
	return rec.Cassette().WriteFile(file)
}

// A Recorder's transport records what a client sends and gets; the
// cassette holds no token.
func ExampleRecorder() {
	srv, err := collabtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithHTTPClient(hc))
	if err != nil {
		panic(err)
	}
	if _, _, err := c.Users.Current(context.Background()); err != nil {
		panic(err)
	}
	for _, e := range rec.Cassette().Exchanges {
		fmt.Println(e.Route, e.Status, e.Request.Header.Get("PRIVATE-TOKEN"))
	}
	// Output: GET /api/v3/user 200 <secret-1>
}

// A Replayer is a transport that answers from a cassette: any token does,
// and Verify reports what the code under test never asked for.
func ExampleReplayer() {
	dir, err := os.MkdirTemp("", "cassette")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := recordOne(filepath.Join(dir, "session.json")); err != nil {
		panic(err)
	}

	cas, err := cassette.Load(filepath.Join(dir, "session.json"))
	if err != nil {
		panic(err)
	}
	replay := cassette.NewReplayer(cas)
	hc := &http.Client{Transport: replay}
	c, err := collab.NewClient("http://collab.invalid", collab.WithPrivateToken("any"), collab.WithHTTPClient(hc))
	if err != nil {
		panic(err)
	}
	me, _, err := c.Users.Current(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(me.Username)
	fmt.Println(replay.Verify())

	_, _, err = c.Users.Get(context.Background(), 42)
	var mismatch *cassette.MismatchError
	fmt.Println(errors.As(err, &mismatch))
	// Output:
	// root
	// <nil>
	// true
}

// Conform sends a cassette's requests to a server and lists where its
// answers differ from the recorded ones.
func ExampleConform() {
	cas, err := recorded()
	if err != nil {
		panic(err)
	}
	target, err := collabtest.NewServer()
	if err != nil {
		panic(err)
	}
	defer target.Close()
	diffs, err := cassette.Conform(context.Background(), cas, target.URL, cassette.ConformOptions{Token: target.AdminToken})
	if err != nil {
		panic(err)
	}
	for _, d := range diffs {
		fmt.Println(d)
	}
	fmt.Println(len(diffs), "differences")
	// Output: 0 differences
}

// A Replayer is a handler too: collabtest.WithReplay serves it on the
// fake's address, for a client that needs a URL (another process, another
// language).
func ExampleReplayer_ServeHTTP() {
	cas, err := recorded()
	if err != nil {
		panic(err)
	}
	srv, err := collabtest.NewServer(collabtest.WithReplay(cassette.NewReplayer(cas)))
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken("any"))
	if err != nil {
		panic(err)
	}
	me, _, err := c.Users.Current(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(me.Username)
	// Output: root
}
