package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
)

// fakeWithBuild starts a fake service holding one pending build and one
// runner, and returns the runner token.
func fakeWithBuild() (srv *collabtest.Server, runnerToken string) {
	srv, err := collabtest.NewServer()
	if err != nil {
		log.Fatal(err)
	}
	project := srv.Seed.Project(srv.Admin, "Widget Factory", collab.PrivateVisibility)
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Stage: "test", Commands: "bundle install\nbundle exec rspec"})
	_, runnerToken = srv.AddRunner("shared runner")
	return srv, runnerToken
}

// runningBuild starts the fake of fakeWithBuild and a runner client that
// has taken its build (as ExampleClient_RequestBuild shows).
func runningBuild() (srv *collabtest.Server, rc *runner.Client, b *runner.Build, runnerToken string) {
	srv, runnerToken = fakeWithBuild()
	rc, err := runner.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	b, err = rc.RequestBuild(context.Background(), runnerToken, nil)
	if err != nil || b == nil {
		log.Fatal("no build: ", err)
	}
	return srv, rc, b, runnerToken
}

// A runner asks for the oldest pending build, and gets nil when there is
// nothing to do. The build token prints redacted.
func ExampleClient_RequestBuild() {
	srv, runnerToken := fakeWithBuild()
	defer srv.Close()
	rc, err := runner.NewClient(srv.URL)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	b, err := rc.RequestBuild(ctx, runnerToken, &runner.Info{Name: "my-runner", Platform: "linux"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s (%s) of %s: %s\n", b.Name, b.Stage, b.ProjectName, b.Status)
	fmt.Printf("commands: %q\n", b.Commands)
	fmt.Println("token:", b.Token)

	b, err = rc.RequestBuild(ctx, runnerToken, nil)
	fmt.Println("next:", b, err)
	// Output:
	// rspec (test) of Widget Factory: running
	// commands: "bundle install\nbundle exec rspec"
	// token: [redacted]
	// next: <nil> <nil>
}

// A TraceWriter streams the job's output to the server as it is written;
// Close sends the rest. Then the runner reports the build's state.
func ExampleClient_NewTraceWriter() {
	srv, rc, b, runnerToken := runningBuild()
	defer srv.Close()
	ctx := context.Background()

	tw := rc.NewTraceWriter(ctx, b.ID, string(b.Token), runner.TraceWriterOptions{})
	fmt.Fprintln(tw, "$ bundle exec rspec")
	fmt.Fprintln(tw, "12 examples, 0 failures")
	if err := tw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := rc.UpdateBuild(ctx, b.ID, runnerToken, collab.BuildSuccess, nil); err != nil {
		log.Fatal(err)
	}

	fmt.Printf("server holds %d bytes:\n%s", tw.Length(), srv.BuildTrace(b.ID))
	status, _ := srv.BuildStatus(b.ID)
	fmt.Println("status:", status)
	// Output:
	// server holds 44 bytes:
	// $ bundle exec rspec
	// 12 examples, 0 failures
	// status: success
}

// Artifacts stream from any io.Reader (an *os.File in a real runner, which
// can be rewound for a retry) and back into any io.Writer.
func ExampleClient_UploadArtifacts() {
	srv, rc, b, _ := runningBuild()
	defer srv.Close()
	ctx := context.Background()

	zip := bytes.NewReader([]byte("PK\x03\x04 a pretend zip file"))
	rec, err := rc.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", zip, &runner.UploadArtifactsOptions{ExpireIn: "7 days"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("uploaded %s, %d bytes\n", rec.ArtifactsFile.Filename, rec.ArtifactsFile.Size)

	n, err := rc.DownloadArtifacts(ctx, b.ID, string(b.Token), io.Discard)
	fmt.Println("downloaded", n, "bytes", err)
	// Output:
	// uploaded artifacts.zip, 23 bytes
	// downloaded 23 bytes <nil>
}
