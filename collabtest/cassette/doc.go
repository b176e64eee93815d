// Package cassette records sessions with a Collaboration Service server,
// replays them in tests, and measures how far another server's answers are
// from them.
//
// A Recorder writes every exchange that passes through it, as a client's
// transport or as a reverse proxy, into a Cassette: a JSON file with no
// secret in it, meant to be committed beside the tests that read it.
//
//	rec := cassette.NewRecorder()
//	hc := &http.Client{Transport: rec.Transport(nil)}
//	c, _ := collab.NewClient(url, collab.WithPrivateToken(token), collab.WithHTTPClient(hc))
//	// ... calls ...
//	err := rec.Cassette().WriteFile("testdata/session.json")
//
// A Replayer answers from a cassette, as a transport or as a handler, and
// Verify reports what the code under test never asked for:
//
//	cas, _ := cassette.Load("testdata/session.json")
//	replay := cassette.NewReplayer(cas)
//	c, _ := collab.NewClient("http://collab.invalid", collab.WithHTTPClient(&http.Client{Transport: replay}))
//
// Conform sends a cassette's requests to a server (the fake of package
// collabtest, or any other) and lists, part by part, where its answers
// differ from the recorded ones.
//
// The command collab has the same tools: collab record, collab fake
// --replay and collab conform.
package cassette
