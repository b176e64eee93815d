package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
)

// repoEnv names the project when -R is not given.
const repoEnv = "COLLAB_REPO"

// project is the project a command works on when -R is not given:
// $COLLAB_REPO, else the path of the current directory's git remote that
// points at the server ("origin" first).
func (c *config) project(ctx context.Context) (string, error) {
	if c.repo != "" {
		return c.repo, nil
	}
	if p := os.Getenv(repoEnv); p != "" {
		return p, nil
	}
	base, err := c.baseURL()
	if err != nil {
		return "", err
	}
	if p := remoteProject(ctx, base); p != "" {
		return p, nil
	}
	return "", usagef("no project: give -R GROUP/PROJECT, set %s, or run in a git clone whose remote points at %s", repoEnv, base)
}

// remoteProject is the project path of the first git remote of the
// current directory on the server at base, or "".
func remoteProject(ctx context.Context, base string) string {
	out, err := exec.CommandContext(ctx, "git", "config", "--get-regexp", `^remote\..*\.url$`).Output()
	if err != nil {
		return ""
	}
	server, err := url.Parse(base)
	if err != nil {
		return ""
	}
	var found string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		key, remote, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		p := projectOfRemote(remote, server)
		if p != "" && (found == "" || key == "remote.origin.url") {
			found = p
		}
	}
	return found
}

// projectOfRemote reads "group/project" from a git remote URL on server:
// https://host/group/project.git, ssh://git@host:22/group/project.git or
// git@host:group/project.git. The host must be the server's (the port is
// not compared: ssh listens on its own); "" otherwise.
func projectOfRemote(remote string, server *url.URL) string {
	var hostname, path string
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		hostname, path = u.Hostname(), u.Path
		if u.Scheme == "http" || u.Scheme == "https" {
			path = strings.TrimPrefix(path, strings.TrimSuffix(server.Path, "/"))
		}
	} else if at, rest, ok := strings.Cut(remote, ":"); ok && !strings.Contains(at, "/") {
		_, hostname, _ = strings.Cut(at, "@")
		if hostname == "" {
			hostname = at
		}
		path = rest
	}
	if hostname == "" || !strings.EqualFold(hostname, server.Hostname()) {
		return ""
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	if strings.Count(path, "/") < 1 {
		return ""
	}
	return path
}

// currentBranch is the branch checked out in the current directory.
func currentBranch(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "git", "symbolic-ref", "--short", "HEAD").Output()
	branch := strings.TrimSpace(string(out))
	if err != nil || branch == "" {
		return "", usagef(":branch: the current directory is not a git clone with a branch checked out")
	}
	return branch, nil
}
