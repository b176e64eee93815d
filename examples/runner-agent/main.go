// Command runner-agent is a small but real build runner. It asks for a build,
// runs its commands with sh -c in a temporary directory while streaming the
// output to the build's trace, zips the declared artifacts and uploads them,
// and reports success or failure. It kills the job when the server reports
// the build canceled.
//
// It registers itself at start with a registration token, checks that the
// server knows it, and unregisters at exit, even when interrupted.
//
// By default it runs against the embedded collabtest server, seeded with a
// project and one pending build. Set COLLAB_URL and
// COLLAB_REGISTRATION_TOKEN (the shared token of the admin area, or a
// project's runners token) to take a build from a real server instead, or
// COLLAB_URL and COLLAB_RUNNER_TOKEN to run as a runner registered before.
//
//	go run ./examples/runner-agent [-artifacts out]
package main

import (
	"archive/zip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// demoCommands is the job the embedded server hands out.
const demoCommands = `echo "building widget"
mkdir -p out
echo "widget v1.0" > out/widget.txt
echo "tests: 12 passed" | tee out/report.txt
echo "done"`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("runner-agent", flag.ContinueOnError)
	fl.SetOutput(stderr)
	artifactsFlag := fl.String("artifacts", "", "path to collect as artifacts (default: the build's options.artifacts.paths, else \"out\")")
	if err := fl.Parse(args); err != nil {
		return 2
	}

	base := os.Getenv("COLLAB_URL")
	token, regToken := os.Getenv("COLLAB_RUNNER_TOKEN"), os.Getenv("COLLAB_REGISTRATION_TOKEN")
	var srv *collabtest.Server
	if base == "" || token == "" && regToken == "" {
		var err error
		if srv, err = collabtest.NewServer(); err != nil {
			fmt.Fprintln(stderr, "runner-agent:", err)
			return 1
		}
		defer srv.Close()
		p := srv.Seed.Project(srv.Admin, "widget", collab.PrivateVisibility)
		srv.Seed.Build(p, collabtest.BuildSpec{Name: "build", Commands: demoCommands})
		base, token, regToken = srv.URL, "", srv.RunnersRegistrationToken()
		fmt.Fprintln(stdout, "using the embedded fake server")
	}

	a := &agent{out: stdout, artifacts: *artifactsFlag, runnerToken: token}
	var err error
	if a.rc, err = runner.NewClient(base); err != nil {
		fmt.Fprintln(stderr, "runner-agent:", err)
		return 1
	}
	if token == "" {
		unregister, err := a.register(ctx, regToken)
		if err != nil {
			fmt.Fprintln(stderr, "runner-agent:", err)
			return 1
		}
		defer unregister()
	}
	state, err := a.runOnce(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "runner-agent:", err)
		return 1
	}
	if srv != nil && state != "" {
		fmt.Fprintf(stdout, "the server's trace of build %d:\n%s", a.buildID, srv.BuildTrace(a.buildID))
	}
	if state == collab.BuildSuccess || state == "" {
		return 0
	}
	return 1
}

// register registers the agent as a new runner and checks that the server
// knows it. The returned func unregisters it, with a context of its own
// so that it still runs after an interrupt.
func (a *agent) register(ctx context.Context, registrationToken string) (unregister func(), err error) {
	reg, err := a.rc.RegisterRunner(ctx, registrationToken, &runner.RegisterRunnerOptions{
		Description: "runner-agent on " + runtime.GOOS, Info: a.info(),
	})
	if err != nil {
		return nil, fmt.Errorf("registering: %w", err)
	}
	a.runnerToken = string(reg.Token)
	unregister = func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := a.rc.DeleteRunner(ctx, a.runnerToken); err != nil {
			fmt.Fprintf(a.out, "runner %d not unregistered: %v\n", reg.ID, err)
			return
		}
		fmt.Fprintf(a.out, "unregistered runner %d\n", reg.ID)
	}
	if err := a.rc.VerifyRunner(ctx, a.runnerToken); err != nil {
		unregister()
		return nil, fmt.Errorf("verifying: %w", err)
	}
	fmt.Fprintf(a.out, "registered and verified runner %d\n", reg.ID)
	return unregister, nil
}

func (a *agent) info() *runner.Info {
	return &runner.Info{Name: "runner-agent", Version: collab.Version, Platform: runtime.GOOS, Architecture: runtime.GOARCH}
}

type agent struct {
	rc          *runner.Client
	out         io.Writer
	runnerToken string
	artifacts   string
	buildID     int
}

// runOnce takes one build and runs it, returning the state it reported
// ("" when there was nothing to do).
func (a *agent) runOnce(ctx context.Context) (collab.BuildStatus, error) {
	b, err := a.take(ctx)
	if b == nil || err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "runner-agent-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)

	tw := a.rc.NewTraceWriter(ctx, b.ID, string(b.Token), runner.TraceWriterOptions{})
	jobErr := a.runJob(ctx, b, dir, tw)
	canceled := isClosed(tw.Canceled())

	state := collab.BuildSuccess
	switch {
	case canceled:
		state = collab.BuildCanceled
		fmt.Fprintln(a.out, "2. the build was canceled: job killed")
	case jobErr != nil:
		state = collab.BuildFailed
		fmt.Fprintf(tw, "\nERROR: job failed: %v\n", jobErr)
		fmt.Fprintf(a.out, "2. job failed: %v\n", jobErr)
	default:
		fmt.Fprintln(tw, "\nJob succeeded")
		fmt.Fprintln(a.out, "2. job succeeded")
	}
	a.closeTrace(tw)

	if !canceled {
		if err := a.uploadArtifacts(ctx, b, dir); err != nil {
			fmt.Fprintf(a.out, "3. artifacts not uploaded: %v\n", err)
			if state == collab.BuildSuccess {
				state = collab.BuildFailed
			}
		}
	}

	err = a.rc.UpdateBuild(ctx, b.ID, a.runnerToken, state, nil)
	switch {
	case canceled && errors.Is(err, collab.ErrNotFound):
		// A canceled build is no longer running: there is nothing to report.
	case err != nil:
		return state, fmt.Errorf("reporting %s: %w", state, err)
	default:
		fmt.Fprintf(a.out, "4. reported %s\n", state)
	}
	return state, nil
}

// take asks for a build; nil, with no error, when none is waiting.
func (a *agent) take(ctx context.Context) (*runner.Build, error) {
	b, err := a.rc.RequestBuild(ctx, a.runnerToken, a.info())
	if err != nil {
		return nil, fmt.Errorf("asking for a build: %w", err)
	}
	if b == nil {
		fmt.Fprintln(a.out, "no build is waiting")
		return nil, nil
	}
	a.buildID = b.ID
	fmt.Fprintf(a.out, "1. took build %d (%s, stage %s) of project %d\n", b.ID, b.Name, b.Stage, b.ProjectID)
	return b, nil
}

// closeTrace sends the rest of the trace and says how much was streamed.
func (a *agent) closeTrace(tw *runner.TraceWriter) {
	if err := tw.Close(); err != nil {
		fmt.Fprintf(a.out, "   trace incomplete: %v\n", err)
		return
	}
	fmt.Fprintf(a.out, "   streamed %d bytes of trace\n", tw.Length())
}

// runJob runs the build's commands with sh -c, its output going to the
// trace, and kills the process if the server reports the build canceled.
func (a *agent) runJob(ctx context.Context, b *runner.Build, dir string, tw *runner.TraceWriter) error {
	jobCtx, kill := context.WithCancel(ctx)
	defer kill()
	go func() {
		select {
		case <-tw.Canceled():
			kill()
		case <-jobCtx.Done():
		}
	}()

	fmt.Fprintf(tw, "Running build %d on runner-agent (%s/%s)\n", b.ID, runtime.GOOS, runtime.GOARCH)
	cmd := exec.CommandContext(jobCtx, "sh", "-c", "set -e\n"+b.Commands)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = tw, tw
	cmd.Env = os.Environ()
	for _, v := range b.Variables {
		cmd.Env = append(cmd.Env, v.Key+"="+v.Value)
	}
	return cmd.Run()
}

// uploadArtifacts zips the declared paths into a temporary file and uploads
// it; a file can be rewound, so the client may send it again (after a 429,
// say) as its retry policy allows.
func (a *agent) uploadArtifacts(ctx context.Context, b *runner.Build, dir string) error {
	paths := []string{"out"}
	expireIn := ""
	if o := b.Options.Artifacts; o != nil {
		if len(o.Paths) > 0 {
			paths = o.Paths
		}
		expireIn = o.ExpireIn
	}
	if a.artifacts != "" {
		paths = []string{a.artifacts}
	}
	f, err := os.CreateTemp("", "artifacts-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := zipPaths(f, dir, paths)
	if err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(a.out, "3. no artifacts found in %v\n", paths)
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	rec, err := a.rc.UploadArtifacts(ctx, b.ID, string(b.Token), "artifacts.zip", f, &runner.UploadArtifactsOptions{ExpireIn: expireIn})
	if err != nil {
		return err
	}
	size := int64(0)
	if rec.ArtifactsFile != nil {
		size = rec.ArtifactsFile.Size
	}
	fmt.Fprintf(a.out, "3. uploaded %d files from %v as artifacts.zip (%d bytes)\n", n, paths, size)
	return nil
}

// zipPaths writes the files under each path (relative to dir) to w and
// returns how many it wrote. Paths that leave dir are refused: the list
// comes from the server.
func zipPaths(w io.Writer, dir string, paths []string) (int, error) {
	zw := zip.NewWriter(w)
	count := 0
	for _, p := range paths {
		clean := filepath.Clean(filepath.FromSlash(p))
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
			return 0, fmt.Errorf("artifacts path %q leaves the build directory", p)
		}
		root := filepath.Join(dir, clean)
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err // skips directories, symlinks and devices
			}
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			src, err := os.Open(path)
			if err != nil {
				return err
			}
			defer src.Close()
			dst, err := zw.Create(filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			if _, err := io.Copy(dst, src); err != nil {
				return err
			}
			count++
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	return count, zw.Close()
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
