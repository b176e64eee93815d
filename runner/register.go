package runner

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/wire"
)

// RegisterRunnerOptions are the optional parameters of RegisterRunner.
type RegisterRunnerOptions struct {
	// Description names the runner in the service's runner lists.
	Description string
	// Tags are the runner's tags: it is handed only builds whose tags it
	// all has. Sent comma-separated, so a tag cannot contain a comma.
	Tags []string
	// RunUntagged, when false, keeps builds without tags from the runner.
	// Nil keeps the server's default (true). A runner that runs no
	// untagged builds needs at least one tag.
	RunUntagged *bool
	// Locked keeps a project's runner from being enabled for other
	// projects. Nil keeps the server's default (false).
	Locked *bool
	// Info describes the runner, as with RequestBuild.
	Info *Info
}

type registerRunnerOptions struct {
	Token       string `url:"token"`
	Description string `url:"description,omitempty"`
	TagList     string `url:"tag_list,omitempty"`
	RunUntagged *bool  `url:"run_untagged,omitempty"`
	Locked      *bool  `url:"locked,omitempty"`
	infoOptions
}

// infoOptions is Info as form values.
type infoOptions struct {
	Name         string `url:"info[name],omitempty"`
	Version      string `url:"info[version],omitempty"`
	Revision     string `url:"info[revision],omitempty"`
	Platform     string `url:"info[platform],omitempty"`
	Architecture string `url:"info[architecture],omitempty"`
}

// Registration is a new runner: its id and its runner token, the secret it
// authenticates with from now on (it redacts itself when printed).
type Registration struct {
	ID    int           `json:"id"`
	Token collab.Secret `json:"token"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// RegisterRunner registers a new runner with a registration token: the
// shared one of the service's settings (a shared runner) or a project's
// runners token (a runner of that project). A 403 (an unknown registration
// token) matches collab.ErrForbidden; a 404 (the runner cannot be saved, as
// when it runs no untagged builds and has no tags) collab.ErrNotFound. A
// registration some of whose values did not fit comes back with the error,
// which wraps collab.FieldErrors, so that the new runner's token is not lost.
//
// API: POST /runners/register (runner)
func (c *Client) RegisterRunner(ctx context.Context, registrationToken string, opts *RegisterRunnerOptions) (*Registration, error) {
	if registrationToken == "" {
		return nil, &collab.ArgumentError{Arg: "registrationToken", Reason: "is empty"}
	}
	opt := registerRunnerOptions{Token: registrationToken}
	if opts != nil {
		for _, tag := range opts.Tags {
			if strings.TrimSpace(tag) == "" || strings.Contains(tag, ",") {
				return nil, &collab.ArgumentError{Arg: "opts.Tags", Reason: "holds an empty tag or a comma"}
			}
		}
		opt.Description, opt.TagList = opts.Description, strings.Join(opts.Tags, ",")
		opt.RunUntagged, opt.Locked = opts.RunUntagged, opts.Locked
		if opts.Info != nil {
			opt.infoOptions = infoOptions(*opts.Info)
		}
	}
	req, err := c.c.NewRequest(ctx, http.MethodPost, wire.Fixed("runners/register"), &opt)
	if err != nil {
		return nil, err
	}
	var reg *Registration
	_, err = c.c.Do(req, &reg)
	switch {
	case err != nil && !partial(err):
		return nil, err
	case reg == nil || reg.Token == "":
		return nil, &collab.DecodeError{Method: req.Method, URL: req.URL.Redacted(), Err: errNoRunnerToken}
	}
	return reg, err // with collab.FieldErrors, the token is kept all the same
}

// errNoRunnerToken is a registration answer without the runner's token.
var errNoRunnerToken = errors.New("server answered no runner token")

// DeleteRunner unregisters the runner of runnerToken. A 403 (no such
// runner, perhaps already deleted) matches collab.ErrForbidden. The token
// travels in the form body, never in the URL.
//
// API: DELETE /runners/delete (runner)
func (c *Client) DeleteRunner(ctx context.Context, runnerToken string) error {
	if runnerToken == "" {
		return &collab.ArgumentError{Arg: "runnerToken", Reason: "is empty"}
	}
	body := strings.NewReader(url.Values{"token": {runnerToken}}.Encode())
	req, err := c.c.NewRequest(ctx, http.MethodDelete, wire.Fixed("runners/delete"), body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err = c.c.Do(req, nil)
	return err
}

// VerifyRunner checks that the runner of runnerToken is still registered,
// as runners do before they start: it reports on a build that cannot
// exist. It returns nil when the runner is alive (the server answers 404,
// also for a paused runner), and an error matching collab.ErrForbidden when
// the runner was removed.
//
// API: PUT /builds/-1 (runner)
func (c *Client) VerifyRunner(ctx context.Context, runnerToken string) error {
	if runnerToken == "" {
		return &collab.ArgumentError{Arg: "runnerToken", Reason: "is empty"}
	}
	// -1 is a build id no server has; the path is fixed, not built from an argument.
	if err := c.putBuild(ctx, wire.Fixed("builds/-1"), &updateOptions{Token: runnerToken}); !errors.Is(err, collab.ErrNotFound) {
		return err
	}
	return nil
}
