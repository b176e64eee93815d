package collabtest

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

type build struct {
	id, projectID                    int
	name, stage, ref                 string
	tag                              bool
	status                           string // pending, running, failed, success, canceled, skipped
	coverage                         *float64
	createdAt, startedAt, finishedAt time.Time
	runnerID                         int
	userID                           int
	commitID, commitMessage          string
	beforeSHA                        string
	commands                         string // lines joined by "\n"
	variables                        []buildVariable
	tags                             []string // a runner must have all of them
	triggered                        bool
	triggerVariables                 []buildVariable
	artifacts                        []byte
	artifactsName                    string
	artifactsExpireAt                time.Time
	trace                            []byte
	erased                           bool
}

type buildVariable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
}

// Access to builds: hidden projects answer 404. Reading needs
// reporter level (20) or a public or internal project; acting (cancel, retry,
// erase, keep) needs developer level (30). Admins may do both. A project with
// builds disabled answers 403 to everyone, as deployed servers do. The
// project's public_builds flag is not consulted (seeded projects leave it
// false), so non-members of public and internal projects always read builds.
//
// The commit of a commit's builds list must be known (a branch head or its
// parent, or the commit of a build); otherwise 404 "404 Commit Not Found".
// Scope is read as deployed servers read it (see buildScopes); a bad one
// answers 400 "Scope contains invalid value(s)".
//
// Transitions, as deployed servers make them:
//   - cancel: pending or running -> canceled; any other status answers
//     403 "403 Forbidden - Build is not cancelable" rather than pretend.
//   - retry: only a finished build (success, failed, canceled, skipped); it
//     makes a NEW pending build and leaves the old one as it was. Others
//     answer 403 "403 Forbidden - Build is not retryable".
//   - erase: only a finished build with artifacts or a trace; otherwise
//     403 "403 Forbidden - Build is not erasable!".
//   - keep: 404 when the build has no artifacts.
func (s *Server) buildRoutes() {
	read, write := rule{builds: readBuilds}, rule{builds: writeBuilds}
	s.api("GET /projects/{id}/builds", read, s.listBuilds)
	s.api("GET /projects/{id}/repository/commits/{sha}/builds", read, s.listCommitBuilds)
	s.api("GET /projects/{id}/builds/{build_id}", read, s.getBuild)
	s.api("GET /projects/{id}/builds/{build_id}/artifacts", read, s.getBuildArtifacts)
	s.api("GET /projects/{id}/builds/{build_id}/trace", read, s.getBuildTrace)
	s.api("POST /projects/{id}/builds/{build_id}/cancel", write, s.cancelBuild)
	s.api("POST /projects/{id}/builds/{build_id}/retry", write, s.retryBuild)
	s.api("POST /projects/{id}/builds/{build_id}/erase", write, s.eraseBuild)
	s.api("POST /projects/{id}/builds/{build_id}/artifacts/keep", write, s.keepBuildArtifacts)
}

// buildAccess is what a builds route needs: to read builds or to act on them.
type buildAccess int

const (
	readBuilds buildAccess = iota + 1
	writeBuilds
)

// checkBuildsAccess: builds enabled, and the caller may read the project's
// builds, or act on them when write is set.
func (c *call) checkBuildsAccess(write bool) error {
	p := c.project
	if !p.buildsEnabled {
		return errForbidden
	}
	lvl := c.s.accessLevel(c.user, p)
	switch {
	case c.user.admin:
	case write && lvl < levelDeveloper:
		return errForbidden
	case !write && lvl < levelReporter && p.visibility < visInternal:
		return errForbidden
	}
	return nil
}

// loadBuild resolves {build_id} within the project: "404 Build Not Found".
func (c *call) loadBuild() error {
	return loadRecord(c, "build_id", "Build", c.s.builds, func(b *build) bool { return b.projectID == c.project.id }, &c.build)
}

// buildScopes reads scope as deployed servers do: scope=x, or
// scope[0]=x&scope[1]=y (any key in the brackets). The Rails form scope[]=
// and unknown values answer 400 "Scope contains invalid value(s)".
func (c *call) buildScopes() ([]string, error) {
	var keyed []string
	for k := range c.form {
		if k != "scope" && strings.HasPrefix(k, "scope[") {
			keyed = append(keyed, k)
		}
	}
	slices.SortFunc(keyed, func(a, b string) int {
		ia, ea := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(a, "scope["), "]"))
		ib, eb := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(b, "scope["), "]"))
		if ea == nil && eb == nil {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	invalid := func() ([]string, error) {
		return nil, errBadRequest("Scope contains invalid value(s)")
	}
	var scopes []string
	if c.has("scope") {
		if len(keyed) > 0 {
			return invalid()
		}
		vs := c.form["scope"]
		if v := vs[len(vs)-1]; v != "" {
			scopes = []string{v}
		}
	}
	for _, k := range keyed {
		if k == "scope[]" || !strings.HasSuffix(k, "]") {
			return invalid()
		}
		scopes = append(scopes, c.form.Get(k))
	}
	for _, v := range scopes {
		switch v {
		case "pending", "running", "success", "failed", "canceled", "skipped":
		default:
			return invalid()
		}
	}
	return scopes, nil
}

// listBuildsWhere writes the project's builds that pass keep and the scope
// filter, newest first, one page at a time.
func (s *Server) listBuildsWhere(c *call, keep func(*build) bool) error {
	scopes, err := c.buildScopes()
	if err != nil {
		return err
	}
	var out []*build
	for _, b := range s.builds {
		if b.projectID == c.project.id && keep(b) && (len(scopes) == 0 || slices.Contains(scopes, b.status)) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *build) int { return b.id - a.id })
	return page(c, out, func(b *build) any { return s.buildJSON(b) })
}

func (s *Server) listBuilds(c *call) error {
	return s.listBuildsWhere(c, func(*build) bool { return true })
}

func (s *Server) listCommitBuilds(c *call) error {
	sha := c.str("sha")
	if !s.knownCommit(c.project, sha) {
		return errNotFound("Commit")
	}
	return s.listBuildsWhere(c, func(b *build) bool { return b.commitID == sha })
}

// knownCommit reports whether sha is a commit of p the fake knows of: a
// branch head, its parent, or the commit of one of p's builds.
func (s *Server) knownCommit(p *project, sha string) bool {
	for _, br := range p.branches {
		if br.commitID == sha || br.parentID == sha {
			return true
		}
	}
	for _, b := range s.builds {
		if b.projectID == p.id && b.commitID == sha {
			return true
		}
	}
	return false
}

func (s *Server) getBuild(c *call) error { return c.json(http.StatusOK, s.buildJSON(c.build)) }

func (s *Server) getBuildArtifacts(c *call) error {
	b := c.build
	if b.artifacts == nil {
		return errNotFound("")
	}
	return sendArtifacts(c, b)
}

// sendArtifacts streams a build's artifacts file as a download.
func sendArtifacts(c *call, b *build) error {
	return c.sendStream(http.StatusOK, http.Header{
		"Content-Type":        {"application/octet-stream"},
		"Content-Disposition": {"attachment; filename=" + b.artifactsName},
	}, b.artifacts)
}

func (s *Server) getBuildTrace(c *call) error {
	b := c.build
	if len(b.trace) == 0 {
		return errNotFound("")
	}
	return c.sendStream(http.StatusOK, http.Header{
		"Content-Type":        {"text/plain"},
		"Content-Disposition": {`infile; filename="` + strconv.Itoa(b.id) + `.log"`},
	}, b.trace)
}

// buildFinished reports the statuses a build does not leave on its own.
func buildFinished(status string) bool {
	switch status {
	case "success", "failed", "canceled", "skipped":
		return true
	}
	return false
}

func (s *Server) cancelBuild(c *call) error {
	b := c.build
	if b.status != "pending" && b.status != "running" {
		return errStatus(http.StatusForbidden, "403 Forbidden - Build is not cancelable")
	}
	s.setBuildStatus(b, "canceled")
	return c.json(http.StatusCreated, s.buildJSON(b))
}

func (s *Server) retryBuild(c *call) error {
	old := c.build
	if !buildFinished(old.status) {
		return errStatus(http.StatusForbidden, "403 Forbidden - Build is not retryable")
	}
	b := &build{
		projectID: old.projectID, name: old.name, stage: old.stage, ref: old.ref, tag: old.tag,
		userID: c.user.id, commitID: old.commitID, commitMessage: old.commitMessage, beforeSHA: old.beforeSHA,
		commands: old.commands, variables: slices.Clone(old.variables),
		tags: old.tags, triggered: old.triggered, triggerVariables: old.triggerVariables,
	}
	s.insertBuild(b, "pending")
	return c.json(http.StatusCreated, s.buildJSON(b))
}

func (s *Server) eraseBuild(c *call) error {
	b := c.build
	if !buildFinished(b.status) || (b.artifacts == nil && len(b.trace) == 0) {
		return errStatus(http.StatusForbidden, "403 Forbidden - Build is not erasable!")
	}
	// Replaced, never edited in place: a download in flight keeps its slice.
	b.artifacts, b.artifactsName, b.artifactsExpireAt, b.trace, b.erased = nil, "", time.Time{}, nil, true
	return c.json(http.StatusCreated, s.actionBuildJSON(b))
}

func (s *Server) keepBuildArtifacts(c *call) error {
	b := c.build
	if b.artifacts == nil {
		return errNotFound("")
	}
	b.artifactsExpireAt = time.Time{}
	return c.json(http.StatusOK, s.actionBuildJSON(b))
}

// insertBuild stores a new build with its first status.
func (s *Server) insertBuild(b *build, status string) {
	b.id, b.createdAt = s.newID(), s.now()
	s.builds[b.id] = b
	s.setBuildStatus(b, status)
}

// setBuildStatus moves a build to status with its timestamps, and lets
// merge requests waiting on it react. Every status change goes through it.
func (s *Server) setBuildStatus(b *build, status string) {
	b.status = status
	switch status {
	case "pending":
		b.startedAt, b.finishedAt = time.Time{}, time.Time{}
	case "running":
		b.startedAt, b.finishedAt = s.now(), time.Time{}
	default:
		if b.startedAt.IsZero() {
			b.startedAt = s.now()
		}
		b.finishedAt = s.now()
	}
	s.emitBuild(b)
	s.buildStatusChanged(b)
}

// actionBuildJSON is the record erase and keep return: download_url (null,
// as the API documentation shows it) in place of artifacts_file.
func (s *Server) actionBuildJSON(b *build) any {
	return reply(s.buildRecord(b), append(buildOmit, "artifacts_file")...)
}

// BuildSpec seeds a build with AddBuild. Zero fields get plausible defaults.
type BuildSpec struct {
	Name, Stage, Ref string // defaults: "test", "test", "master"
	Status           string // default "pending"
	Commit           string // commit id; default: the head of Ref
	CommitMessage    string
	UserID           int    // default: the project creator
	Commands         string // lines joined by "\n"
	Artifacts        []byte // stored as ArtifactsName when non-nil
	ArtifactsName    string // default "artifacts.zip"
	Trace            string
	Tag              bool
	Coverage         *float64
	Tags             []string // runner tags the build needs
}

// AddBuild seeds a build in a project and returns its id. An unknown
// project or status is a mistake (see Err) and returns 0.
//
// Deprecated: Use Seed.Build, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddBuild(projectID int, spec BuildSpec) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	status := or(spec.Status, "pending")
	if p == nil || !validBuildStatus(status) {
		s.misuse("AddBuild: no project %d or unknown status %q", projectID, spec.Status)
		return 0
	}
	b := &build{
		projectID: projectID, name: or(spec.Name, "test"), stage: or(spec.Stage, "test"),
		ref: or(spec.Ref, "master"), tag: spec.Tag, tags: slices.Clone(spec.Tags),
		userID: spec.UserID, commitID: spec.Commit, commitMessage: or(spec.CommitMessage, "Update"),
		commands: spec.Commands, trace: []byte(spec.Trace), coverage: spec.Coverage,
	}
	if b.userID == 0 {
		b.userID = p.creatorID
	}
	if b.commitID == "" {
		if br := p.branches[b.ref]; br != nil {
			b.commitID = br.commitID
		} else {
			b.commitID = randomHex(20)
		}
	}
	if spec.Artifacts != nil {
		b.artifacts, b.artifactsName = spec.Artifacts, or(spec.ArtifactsName, "artifacts.zip")
	}
	s.insertBuild(b, status)
	if status != "pending" && status != "running" {
		b.startedAt = b.createdAt
		b.finishedAt = b.createdAt
	} else if status == "running" {
		b.startedAt = b.createdAt
	}
	return b.id
}

func validBuildStatus(status string) bool {
	switch status {
	case "pending", "running", "success", "failed", "canceled", "skipped":
		return true
	}
	return false
}

// SetBuildStatus moves a build to status, as a runner would, and lets merge
// requests waiting on it react. An unknown build or status is a mistake
// (see Err).
func (s *Server) SetBuildStatus(buildID int, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.builds[buildID]
	if b == nil || !validBuildStatus(status) {
		s.misuse("SetBuildStatus: no build %d or unknown status %q", buildID, status)
		return
	}
	s.setBuildStatus(b, status)
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// buildJSON renders a build as the consumer API and the runner's artifacts
// upload return it.
func (s *Server) buildJSON(b *build) any {
	return reply(s.buildRecord(b), append(buildOmit, "download_url")...)
}
