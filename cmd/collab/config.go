package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
)

// config is where the server and the credentials come from. The token is
// read from the environment, a file or the hosts file that collab auth
// login writes, never from a flag value, so that it shows neither in the
// process list nor in shell history.
type config struct {
	url       string
	tokenFile string
	repo      string // -R on a typed command, read by project
}

func (c *config) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&c.url, "url", "", "server base `URL` (default $COLLAB_URL, else the one server signed in with collab auth login)")
	f.StringVar(&c.tokenFile, "token-file", "", "read the token from `FILE` (default $COLLAB_TOKEN, else the one collab auth login stored)")
}

// baseURL is the server: --url, $COLLAB_URL, or the only host signed in.
func (c *config) baseURL() (string, error) {
	base := c.url
	if base == "" {
		base = os.Getenv("COLLAB_URL")
	}
	if base == "" {
		hosts, err := loadHosts()
		if err != nil {
			return "", err
		}
		switch names := hosts.names(); len(names) {
		case 0:
			return "", usagef("no server: set COLLAB_URL, give --url, or sign in with collab auth login --url URL")
		case 1:
			base = names[0]
		default:
			return "", usagef("signed in to several servers (%s): set COLLAB_URL or give --url", strings.Join(names, ", "))
		}
	}
	return checkBase(base)
}

// checkBase checks a server URL, saying how to fix the usual mistakes.
func checkBase(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		if !strings.Contains(base, "://") {
			return "", usagef("server URL %q has no scheme: give http://%s or https://%s", base, base, base)
		}
		return "", usagef("server URL %q is not a URL", base)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", usagef("server URL %q: the scheme must be http or https", base)
	}
	return hostKey(u), nil
}

// hostKey is how a server is named in the hosts file: scheme, host and
// path, without a trailing slash.
func hostKey(u *url.URL) string {
	return u.Scheme + "://" + u.Host + strings.TrimSuffix(u.Path, "/")
}

// token returns the token and how to send it: "private" or "oauth". It
// reads $COLLAB_TOKEN, --token-file, or else the token collab auth login
// stored for the server.
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
	if token == "" {
		if h, ok := c.storedHost(); ok {
			token, kind = h.Token, h.Kind
		}
	}
	switch kind {
	case "", "private":
		kind = "private"
	case "oauth":
	default:
		return "", "", usagef("COLLAB_TOKEN_KIND must be private or oauth, not %q", kind)
	}
	return token, kind, nil
}

// storedHost is what collab auth login stored for the server, if anything.
func (c *config) storedHost() (host, bool) {
	base, err := c.baseURL()
	if err != nil {
		return host{}, false
	}
	hosts, err := loadHosts()
	if err != nil {
		return host{}, false
	}
	h, ok := hosts.Hosts[base]
	return h, ok && h.Token != ""
}

// client builds an SDK client for the API at apiPath ("api/v3" or
// "ci/api/v1"); hc carries the command's transport. It returns the token
// too, so that output can redact it. extra options come last.
func (c *config) client(apiPath string, hc *http.Client, extra ...collab.ClientOption) (*collab.Client, string, error) {
	base, err := c.baseURL()
	if err != nil {
		return nil, "", err
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

// apiClient is the client of the typed commands.
func (c *config) apiClient() (*collab.Client, error) {
	cl, _, err := c.client("api/v3", nil)
	return cl, err
}
