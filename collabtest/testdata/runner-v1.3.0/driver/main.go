// Command driver runs the network client of gitlab-runner v1.3.0, unmodified,
// one step at a time, for collabtest's conformance test. It reads one JSON
// command per line on stdin and answers each with one JSON line on stdout,
// so that the test can check the fake's state between steps. The client's
// own log goes to stderr.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/Sirupsen/logrus"
	"gitlab.com/gitlab-org/gitlab-ci-multi-runner/common"
	"gitlab.com/gitlab-org/gitlab-ci-multi-runner/network"
)

// command is one step. URL is the service's base URL plus "/ci", as a
// runner's config.toml holds it.
type command struct {
	Op          string `json:"op"`
	URL         string `json:"url"`
	Token       string `json:"token"` // the registration or runner token
	BuildToken  string `json:"build_token"`
	Description string `json:"description"`
	Tags        string `json:"tags"`
	BuildID     int    `json:"build_id"`
	Text        string `json:"text"`
	Data        []byte `json:"data"`
	ExpireIn    string `json:"expire_in"`
	Failed      bool   `json:"failed"`
}

// reply answers a command. OK is the client's boolean answer; State its
// numeric Update/Upload/DownloadState.
type reply struct {
	OK    bool                     `json:"ok"`
	State int                      `json:"state"`
	Token string                   `json:"token,omitempty"`
	Build *common.GetBuildResponse `json:"build,omitempty"`
	Data  []byte                   `json:"data,omitempty"`
	Error string                   `json:"error,omitempty"`
}

// trace is a build's trace loop, as the runner runs it while a build runs.
type trace struct {
	common.BuildTrace
	aborted chan struct{}
}

type driver struct {
	n      network.GitLabClient
	dir    string
	traces map[int]*trace
}

func main() {
	logrus.SetOutput(os.Stderr)
	logrus.SetLevel(logrus.DebugLevel)
	dir, err := os.MkdirTemp("", "runner-driver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	d := &driver{dir: dir, traces: map[int]*trace{}}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c command
		r := reply{}
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			r.Error = err.Error()
		} else {
			r = d.do(c)
		}
		if err := out.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func (d *driver) do(c command) (r reply) {
	creds := common.RunnerCredentials{URL: c.URL, Token: c.Token}
	config := common.RunnerConfig{Name: "conformance", RunnerCredentials: creds}
	config.Executor = "shell"
	build := common.BuildCredentials{ID: c.BuildID, Token: c.BuildToken, URL: c.URL}
	switch c.Op {
	case "register":
		if res := d.n.RegisterRunner(creds, c.Description, c.Tags); res != nil {
			r.OK, r.Token = true, res.Token
		}
	case "verify":
		r.OK = d.n.VerifyRunner(creds)
	case "delete":
		r.OK = d.n.DeleteRunner(creds)
	case "get_build":
		r.Build, r.OK = d.n.GetBuild(config)
	case "update_build":
		// A runner's final report, with its whole trace.
		state := common.BuildState(common.Success)
		if c.Failed {
			state = common.Failed
		}
		r.State = int(d.n.UpdateBuild(config, c.BuildID, state, &c.Text))
	case "start_trace":
		t := &trace{BuildTrace: d.n.ProcessBuild(config, &build), aborted: make(chan struct{})}
		var once sync.Once
		t.Notify(func() { once.Do(func() { close(t.aborted) }) })
		d.traces[c.BuildID] = t
		r.OK = true
	case "write_trace":
		if t := d.traces[c.BuildID]; t != nil {
			_, err := t.Write([]byte(c.Text))
			r.OK = err == nil
		}
	case "wait_abort":
		// The trace loop aborts the build when the server reports it canceled.
		if t := d.traces[c.BuildID]; t != nil {
			select {
			case <-t.aborted:
				r.OK = true
			case <-time.After(time.Minute):
			}
		}
	case "finish_trace":
		// Success and Fail return once the final trace and state were sent.
		if t := d.traces[c.BuildID]; t != nil {
			if c.Failed {
				t.Fail(fmt.Errorf("build failed"))
			} else {
				t.Success()
			}
			delete(d.traces, c.BuildID)
			r.OK = true
		}
	case "upload":
		path := filepath.Join(d.dir, "artifacts.zip")
		if err := os.WriteFile(path, c.Data, 0o600); err != nil {
			r.Error = err.Error()
			return r
		}
		if c.ExpireIn != "" {
			f, err := os.Open(path)
			if err != nil {
				r.Error = err.Error()
				return r
			}
			defer f.Close()
			r.State = int(d.n.UploadRawArtifacts(build, f, "artifacts.zip", c.ExpireIn))
		} else {
			r.State = int(d.n.UploadArtifacts(build, path))
		}
	case "download":
		path := filepath.Join(d.dir, "downloaded.zip")
		r.State = int(d.n.DownloadArtifacts(build, path))
		r.Data, _ = os.ReadFile(path)
		os.Remove(path)
	default:
		r.Error = "unknown op " + c.Op
	}
	return r
}
