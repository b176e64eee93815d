package main

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// Exit statuses, as collab help exit-codes tells them.
const (
	exitOK      = 0
	exitFail    = 1
	exitUsage   = 2
	exitAuth    = 4 // not signed in, or not allowed
	exitPending = 8 // still pending (build view --exit-status)
)

// exitCodesHelp is collab help exit-codes.
const exitCodesHelp = `collab exits with one of these statuses:

  0  it worked; an empty list is a success too
  1  it failed: the server answered an error, a request could not be sent,
     or (with --exit-status) the build failed or was canceled
  2  the command line is wrong: an unknown command or flag, a missing argument,
     a value of the wrong kind, or a --json field the record does not have
  4  not signed in or not allowed: the server answered 401 or 403, or
     collab auth status found no working token
  8  still pending: build view --exit-status (and the other build commands
     with --exit-status) on a build that is pending or running

An error is one line on standard error, with a hint where one helps; standard
output carries data only.`

// exitStatus is the status err exits with.
func exitStatus(err error) int {
	var ee exitError
	var ue usageError
	var ie *ops.InputError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), errors.As(err, &ie):
		return exitUsage
	case errors.Is(err, collab.ErrUnauthorized), errors.Is(err, collab.ErrForbidden), errors.Is(err, errNotSignedIn):
		return exitAuth
	}
	return exitFail
}

// hint is a sentence that helps with err, or "".
func hint(err error) string {
	var er *collab.ErrorResponse
	var he hintedError
	switch {
	case errors.As(err, &he):
		return he.hint
	case errors.Is(err, collab.ErrUnauthorized):
		return "sign in with collab auth login --url URL < token.txt, or set COLLAB_TOKEN"
	case errors.Is(err, collab.ErrForbidden):
		return "the token's user is not allowed to do this (collab auth status shows who it is)"
	case !errors.As(err, &er):
		return ""
	}
	var ae apiError
	switch {
	case !errors.As(err, &ae):
	case er.StatusCode == http.StatusNotFound:
		return notFoundHint(er)
	case er.StatusCode == http.StatusBadRequest && er.Method == http.MethodPost && ae.impliedPost:
		return "-f and -F made this a POST; add -X GET to send them in the query string of a GET"
	}
	return ""
}

// apiError is an error of collab api, whose paths the caller wrote: the
// hints about paths apply to it alone.
type apiError struct {
	err error
	// impliedPost says that -f or -F made the request a POST without -X.
	impliedPost bool
}

func (e apiError) Error() string { return e.err.Error() }
func (e apiError) Unwrap() error { return e.err }

// byID matches a path that takes an issue's or a merge request's id.
var byID = regexp.MustCompile(`/projects/[^/]+/(issues|merge_requests)/(\d+)(/|$)`)

// notFoundHint explains the usual 404 of collab api: a number people see
// (iid) where the path takes an id. (The other, a project path not
// escaped, collab api mends: see escapeProjectPath.)
func notFoundHint(er *collab.ErrorResponse) string {
	u, err := url.Parse(er.URL)
	if err != nil {
		return ""
	}
	if m := byID.FindStringSubmatch(u.EscapedPath()); m != nil {
		noun := map[string]string{"issues": "issue", "merge_requests": "mr"}[m[1]]
		return m[1] + "/" + m[2] + " takes the global id, not the number #" + m[2] + " people see: collab " + noun +
			" view " + m[2] + " takes the number, or ask " + m[1] + "?iid=" + m[2]
	}
	return ""
}

// projectKeywords are the segments after projects/ that are routes, not a
// project's namespace.
var projectKeywords = map[string]bool{"owned": true, "starred": true, "all": true, "search": true, "fork": true, "user": true}

// escapeProjectPath escapes a project path given whole in a collab api
// path: "projects/acme/webshop/issues" becomes
// "projects/acme%2Fwebshop/issues". A path whose project is an id, already
// escaped, or a route (projects/owned) is left as it is.
func escapeProjectPath(path string) string {
	path, query, hasQuery := strings.Cut(path, "?")
	if hasQuery {
		return escapeProjectPath(path) + "?" + query
	}
	rest, ok := strings.CutPrefix(path, "projects/")
	if !ok {
		return path
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" || projectKeywords[parts[0]] ||
		strings.Contains(parts[0], "%") || strings.Trim(parts[0], "0123456789") == "" {
		return path
	}
	out := "projects/" + escapeSegment(parts[0]) + "%2F" + escapeSegment(parts[1])
	if len(parts) == 3 {
		out += "/" + parts[2]
	}
	return out
}

// escapeSegment escapes a path segment as the SDK does, "." included.
func escapeSegment(s string) string { return strings.ReplaceAll(url.PathEscape(s), ".", "%2E") }

// hintedError is an error with the hint a command knows for it.
type hintedError struct {
	err  error
	hint string
}

func (e hintedError) Error() string { return e.err.Error() }
func (e hintedError) Unwrap() error { return e.err }

// numberHint explains a number not found where an operation takes the
// number people see: an id was perhaps given instead. The lookup by number
// reports a missing one as collab.ErrNotFound without a server's answer;
// a 404 answer (no such project) gets no such hint.
func numberHint(op *ops.Op, err error) error {
	var er *collab.ErrorResponse
	if !errors.Is(err, collab.ErrNotFound) || errors.As(err, &er) {
		return err
	}
	for _, a := range op.Args {
		switch a.Kind {
		case ops.KindIssue:
			return hintedError{err, "the number is the #iid the project shows, not the issue's id: collab issue list shows them"}
		case ops.KindMergeRequest:
			return hintedError{err, "the number is the !iid the project shows, not the merge request's id: collab mr list shows them"}
		}
	}
	return err
}
