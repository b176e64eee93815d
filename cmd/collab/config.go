package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
)

// config is where the server and the credentials come from. The token is
// read from the environment or a file, never from a flag value, so that it
// shows neither in the process list nor in shell history.
type config struct {
	url       string
	tokenFile string
}

func (c *config) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&c.url, "url", "", "server base `URL` (default $COLLAB_URL)")
	f.StringVar(&c.tokenFile, "token-file", "", "read the token from `FILE` (default $COLLAB_TOKEN)")
}

// token returns the token and how to send it: "private" or "oauth".
func (c *config) token() (token, kind string, err error) {
	token = os.Getenv("COLLAB_TOKEN")
	if c.tokenFile != "" {
		// Not a silent anonymous call when the file is empty: the caller
		// meant to send a token.
		if token, err = readTokenFile("--token-file", c.tokenFile); err != nil {
			return "", "", err
		}
	}
	kind = strings.ToLower(strings.TrimSpace(os.Getenv("COLLAB_TOKEN_KIND")))
	switch kind {
	case "", "private":
		kind = "private"
	case "oauth":
	default:
		return "", "", usagef("COLLAB_TOKEN_KIND must be private or oauth, not %q", kind)
	}
	return token, kind, nil
}

// client builds an SDK client for the API at apiPath ("api/v3" or
// "ci/api/v1"); hc carries the command's transport. It returns the token
// too, so that output can redact it. extra options come last.
func (c *config) client(apiPath string, hc *http.Client, extra ...collab.ClientOption) (*collab.Client, string, error) {
	base := c.url
	if base == "" {
		base = os.Getenv("COLLAB_URL")
	}
	if base == "" {
		return nil, "", usagef("no server: set COLLAB_URL or give --url")
	}
	token, kind, err := c.token()
	if err != nil {
		return nil, "", err
	}
	opts := []collab.ClientOption{collab.WithAPIPath(apiPath), collab.WithUserAgent("collab-cli/" + moduleVersion())}
	if hc != nil {
		opts = append(opts, collab.WithHTTPClient(hc))
	}
	if token != "" {
		if kind == "oauth" {
			opts = append(opts, collab.WithOAuthToken(token))
		} else {
			opts = append(opts, collab.WithPrivateToken(token))
		}
	}
	cl, err := collab.NewClient(base, append(opts, extra...)...)
	if err != nil {
		return nil, "", usageError{fmt.Errorf("server URL: %w", err)}
	}
	return cl, token, nil
}
