package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/collabsvc/collab"
)

// hostsFile is where collab auth login keeps a token per server, readable
// by its owner alone.
const hostsFile = "hosts.json"

// host is what collab auth login keeps of one server.
type host struct {
	Token string `json:"token"`
	Kind  string `json:"token_kind"` // private or oauth
	User  string `json:"user"`       // the username the token belonged to at login
}

// hosts are the servers signed in, by base URL: several are kept apart.
type hosts struct {
	Hosts map[string]host `json:"hosts"`
}

func (h *hosts) names() []string { return slices.Sorted(maps.Keys(h.Hosts)) }

// configDir is $COLLAB_CONFIG_DIR, else collab in the user's config
// directory.
func configDir() (string, error) {
	if d := os.Getenv("COLLAB_CONFIG_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "collab"), nil
}

func loadHosts() (*hosts, error) {
	h := &hosts{Hosts: map[string]host{}}
	dir, err := configDir()
	if err != nil {
		return h, nil // no home: nobody signed in
	}
	b, err := os.ReadFile(filepath.Join(dir, hostsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, h); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, hostsFile), err)
	}
	if h.Hosts == nil {
		h.Hosts = map[string]host{}
	}
	return h, nil
}

// save writes the hosts file with mode 0600, replacing it whole so that a
// crash leaves the old one or the new one.
func (h *hosts) save() error {
	dir, err := configDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, hostsFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, hostsFile))
}

// authCmd holds the flags of collab auth.
type authCmd struct {
	cfg   *config
	std   stdio
	oauth bool
}

func newAuthCmd(cfg *config, std stdio) *cobra.Command {
	a := &authCmd{cfg: cfg, std: std}
	login := leafCmd(cmdText{
		use:   "login",
		short: "Store a token for a server",
		long: "collab auth login reads a token from standard input (one line; on a terminal it asks,\n" +
			"without echo), checks it with the server and stores it for that server in hosts.json in\n" +
			"$COLLAB_CONFIG_DIR (default: collab in your config directory), readable by you alone.\n" +
			"Each server is kept apart; --url (or $COLLAB_URL) names the server.\n\n" +
			"$COLLAB_TOKEN and --token-file, when set, come before a stored token.",
		example: "  collab auth login --url https://collab.example.com < token.txt",
	}, rangeArgs(0, 0), a.login)
	login.Flags().BoolVar(&a.oauth, "oauth", false, "the token is an OAuth token (sent as a bearer token)")
	status := leafCmd(cmdText{
		use:   "status",
		short: "Show who each stored token signs in as; exit 4 when not signed in",
		long: "collab auth status checks the token of the server (--url or $COLLAB_URL), or of every\n" +
			"stored server, with the server, and prints who it signs in as. It exits 4 when a\n" +
			"server has no token or rejects it.",
	}, rangeArgs(0, 0), a.status)
	logout := leafCmd(cmdText{
		use:   "logout",
		short: "Forget the stored token of a server",
	}, rangeArgs(0, 0), a.logout)
	return groupCmd(cmdText{use: "auth", short: "Sign in to servers, check and forget tokens"}, login, status, logout)
}

func (a *authCmd) login(ctx context.Context, _ []string) error {
	base, err := a.explicitBase()
	if err != nil {
		return err
	}
	token, err := a.readToken()
	if err != nil {
		return err
	}
	kind := "private"
	if a.oauth {
		kind = "oauth"
	}
	user, err := whoami(ctx, base, token, kind)
	if err != nil {
		return err
	}
	hosts, err := loadHosts()
	if err != nil {
		return err
	}
	hosts.Hosts[base] = host{Token: token, Kind: kind, User: user}
	if err := hosts.save(); err != nil {
		return err
	}
	fmt.Fprintf(a.std.err, "collab: signed in to %s as %s\n", base, user)
	return nil
}

// explicitBase is the server --url or $COLLAB_URL names; login and logout
// need one named.
func (a *authCmd) explicitBase() (string, error) {
	base := a.cfg.url
	if base == "" {
		base = os.Getenv("COLLAB_URL")
	}
	if base == "" {
		return "", usagef("name the server: --url URL or $COLLAB_URL")
	}
	return checkBase(base)
}

// readToken reads one line from standard input: on a terminal it asks,
// without echo; off one it never prompts.
func (a *authCmd) readToken() (string, error) {
	var line string
	if f, ok := a.std.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(a.std.err, "Paste a token: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.std.err)
		if err != nil {
			return "", err
		}
		line = string(b)
	} else {
		s, err := bufio.NewReader(io.LimitReader(a.std.in, 64<<10)).ReadString('\n')
		if err != nil && err != io.EOF {
			return "", err
		}
		line = s
	}
	token := strings.TrimSpace(line)
	if token == "" {
		return "", usagef("no token on standard input: collab auth login --url URL < token.txt")
	}
	return token, nil
}

// whoami asks the server whose token this is.
func whoami(ctx context.Context, base, token, kind string) (string, error) {
	opt := collab.WithPrivateToken(token)
	if kind == "oauth" {
		opt = collab.WithOAuthToken(token)
	}
	c, err := collab.NewClient(base, opt, collab.WithUserAgent("collab-cli/"+moduleVersion()))
	if err != nil {
		return "", usageError{fmt.Errorf("server URL: %w", err)}
	}
	defer c.Close()
	u, _, err := c.Users.Current(ctx)
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// notSignedIn is the error of auth status when a server has no working
// token; it exits 4.
var errNotSignedIn = errors.New("not signed in")

func (a *authCmd) status(ctx context.Context, _ []string) error {
	hosts, err := loadHosts()
	if err != nil {
		return err
	}
	names := hosts.names()
	if a.cfg.url != "" || os.Getenv("COLLAB_URL") != "" {
		base, err := a.explicitBase()
		if err != nil {
			return err
		}
		names = []string{base}
	}
	if len(names) == 0 {
		fmt.Fprintln(a.std.out, "not signed in to any server: collab auth login --url URL < token.txt")
		return exitError{exitAuth}
	}
	failed := false
	for _, base := range names {
		token, kind, from := a.tokenFor(base, hosts)
		if token == "" {
			fmt.Fprintf(a.std.out, "%s: not signed in\n", base)
			failed = true
			continue
		}
		user, err := whoami(ctx, base, token, kind)
		if err != nil {
			fmt.Fprintf(a.std.out, "%s: the token from %s does not work: %v\n", base, from, err)
			failed = true
			continue
		}
		fmt.Fprintf(a.std.out, "%s: signed in as %s (token from %s)\n", base, user, from)
	}
	if failed {
		return exitError{exitAuth}
	}
	return nil
}

// tokenFor is the token the commands would send to base, and where it
// comes from.
func (a *authCmd) tokenFor(base string, hosts *hosts) (token, kind, from string) {
	if t := os.Getenv("COLLAB_TOKEN"); t != "" || a.cfg.tokenFile != "" {
		from = "$COLLAB_TOKEN"
		if a.cfg.tokenFile != "" {
			from = a.cfg.tokenFile
		}
		t, k, err := a.cfg.token()
		if err != nil {
			return "", "", from
		}
		return t, k, from
	}
	h := hosts.Hosts[base]
	return h.Token, h.Kind, "the hosts file"
}

func (a *authCmd) logout(_ context.Context, _ []string) error {
	hosts, err := loadHosts()
	if err != nil {
		return err
	}
	base := a.cfg.url
	if base == "" {
		base = os.Getenv("COLLAB_URL")
	}
	if base == "" && len(hosts.Hosts) == 1 {
		base = hosts.names()[0]
	}
	if base == "" {
		return usagef("name the server to sign out of: --url URL (signed in: %s)", strings.Join(hosts.names(), ", "))
	}
	if base, err = checkBase(base); err != nil {
		return err
	}
	if _, ok := hosts.Hosts[base]; !ok {
		return fmt.Errorf("not signed in to %s: %w", base, errNotSignedIn)
	}
	delete(hosts.Hosts, base)
	if err := hosts.save(); err != nil {
		return err
	}
	fmt.Fprintf(a.std.err, "collab: signed out of %s\n", base)
	return nil
}
