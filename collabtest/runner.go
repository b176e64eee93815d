package collabtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The runner API (/ci/api/v1), as deployed servers answer the runner:
//
//   - POST /runners/register takes a registration token (the shared one,
//     RunnersRegistrationToken, or a project's runners token) and answers
//     201 {id, token}; 403 for an unknown token, 400 for none, 404 when the
//     runner cannot be saved (run_untagged false and no tags).
//   - DELETE /runners/delete removes the runner of token: 200, 403 unknown,
//     400 missing.
//   - POST /builds/register hands the oldest pending build the runner may
//     pick (201), or answers 404 when there is none or the runner is paused:
//     both mean "nothing to do". 403 only for an unknown runner token.
//   - PUT /builds/{id}: 403 for an unknown runner token (paused runners are
//     served), 404 when the build is not running or not this runner's, 403
//     when erased; applies state and replaces the trace when one is sent.
//     So PUT /builds/-1 is the runner's liveness check: 404 alive, 403 gone.
//   - PATCH /builds/{id}/trace.txt appends when Content-Range starts at the
//     current length (202, Build-Status and Range: 0-<length>), else 416,
//     whatever the build's state, so that a runner whose build was dropped
//     reads Build-Status and stops. Only a missing build (404), a bad token
//     (403) and an erased build (403) are refused.
//   - POST, GET and DELETE /builds/{id}/artifacts with the build token.
type runner struct {
	id                int
	token             string
	description, name string
	active, isShared  bool
	projectID         int // a project's runner (0 for a shared one)
	tags              []string
	runUntagged       bool
	locked            bool

	version, revision, platform, architecture string // from info[...]
	contactedAt                               time.Time
}

// canPick reports whether r may run b, as deployed servers decide: a
// shared runner builds projects with shared runners enabled, a project's
// runner only its project; a build's tags must all be the runner's, and an
// untagged build needs a runner that runs untagged builds.
func (s *Server) canPick(r *runner, b *build) bool {
	p := s.projects[b.projectID]
	switch {
	case p == nil, r.isShared && !p.sharedRunnersEnabled, !r.isShared && r.projectID != p.id:
		return false
	case len(b.tags) == 0 && !r.runUntagged:
		return false
	}
	for _, t := range b.tags {
		if !slices.Contains(r.tags, t) {
			return false
		}
	}
	return true
}

// defaultMaxArtifactsMB is the server's default artifacts size limit, in
// megabytes as the max_artifacts_size setting holds it.
const defaultMaxArtifactsMB = 100

// maxTracePart bounds one trace append the fake reads.
const maxTracePart = 16 << 20

func (s *Server) runnerRoutes() {
	streamed := rule{unlocked: true, rawBody: true}
	s.runnerAPI("POST /runners/register", rule{}, s.registerRunner)
	s.runnerAPI("DELETE /runners/delete", rule{}, s.deleteRunner)
	s.runnerAPI("POST /builds/register", rule{}, s.registerBuild)
	s.runnerAPI("PUT /builds/{id}", rule{}, s.updateBuild)
	s.runnerAPI("PATCH /builds/{id}/trace.txt", streamed, s.appendTrace)
	s.runnerAPI("POST /builds/{id}/artifacts", streamed, s.uploadArtifacts)
	s.runnerAPI("GET /builds/{id}/artifacts", rule{}, s.downloadArtifacts)
	s.runnerAPI("DELETE /builds/{id}/artifacts", rule{}, s.deleteArtifacts)
}

// AddRunner registers an active shared runner and returns its id and its
// runner token, for RequestBuild and UpdateBuild.
func (s *Server) AddRunner(description string) (id int, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.newRunner(description)
	r.isShared = true
	return r.id, r.token
}

// newRunner stores an active runner that runs untagged builds.
func (s *Server) newRunner(description string) *runner {
	r := &runner{id: s.newID(), token: "runner-" + randomHex(10), description: description, active: true, runUntagged: true}
	s.runners[r.id] = r
	return r
}

// RunnersRegistrationToken returns the shared runners registration token
// of the application settings: a runner registered with it is shared. A
// project's runners token (ProjectRunnersToken) registers a runner of that
// project.
func (s *Server) RunnersRegistrationToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registrationToken()
}

func (s *Server) registrationToken() string {
	if s.runnersRegistrationToken == "" {
		s.runnersRegistrationToken = "rtok-" + randomHex(10)
	}
	return s.runnersRegistrationToken
}

// Runner is a runner as the fake holds it, for tests.
type Runner struct {
	ID          int
	Description string
	Active      bool
	Shared      bool
	ProjectID   int // the project of a project's runner; 0 for a shared one
	Tags        []string
	RunUntagged bool
	Locked      bool
	// From the info the runner sends with register calls.
	Name, Version, Revision, Platform, Architecture string
	ContactedAt                                     time.Time // zero until it asks for a build or checks in
}

// Runners returns every runner, by id.
func (s *Server) Runners() []Runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Runner, 0, len(s.runners))
	for _, r := range s.runners {
		out = append(out, Runner{
			ID: r.id, Description: r.description, Active: r.active, Shared: r.isShared, ProjectID: r.projectID,
			Tags: slices.Clone(r.tags), RunUntagged: r.runUntagged, Locked: r.locked,
			Name: r.name, Version: r.version, Revision: r.revision, Platform: r.platform, Architecture: r.architecture,
			ContactedAt: r.contactedAt,
		})
	}
	slices.SortFunc(out, func(a, b Runner) int { return a.ID - b.ID })
	return out
}

// registerRunner creates a runner from a registration token.
func (s *Server) registerRunner(c *call) error {
	tok := c.str("token")
	if strings.TrimSpace(tok) == "" {
		return errMissing("token")
	}
	var project *project
	if tok != s.registrationToken() {
		for _, p := range s.projects {
			if p.runnersToken == tok {
				project = p
			}
		}
		if project == nil {
			return errForbidden
		}
	}
	// Blank values are left out, as for every create.
	nonBlank := func(name string) (string, bool) {
		v := c.str(name)
		return v, strings.TrimSpace(v) != ""
	}
	untagged, locked := true, false
	if _, ok := nonBlank("run_untagged"); ok {
		untagged, _ = c.boolParam("run_untagged")
	}
	if _, ok := nonBlank("locked"); ok {
		locked, _ = c.boolParam("locked")
	}
	tags := c.listParam("tag_list")
	if !untagged && len(tags) == 0 {
		return errNotFound("")
	}
	desc, _ := nonBlank("description")
	r := s.newRunner(desc)
	r.tags, r.runUntagged, r.locked = tags, untagged, locked
	if project == nil {
		r.isShared = true
	} else {
		r.projectID = project.id
	}
	s.readRunnerInfo(c, r)
	return c.json(http.StatusCreated, registrationJSON(r))
}

// registrationJSON is the answer of a registration: runner.Registration's
// keys, with the token, which that record would write redacted.
func registrationJSON(r *runner) map[string]any { return map[string]any{"id": r.id, "token": r.token} }

// deleteRunner removes the runner of the token.
func (s *Server) deleteRunner(c *call) error {
	tok := c.str("token")
	if strings.TrimSpace(tok) == "" {
		return errMissing("token")
	}
	r := s.runnerByToken(tok)
	if r == nil {
		return errForbidden
	}
	delete(s.runners, r.id)
	return c.json(http.StatusOK, reply(r.record()))
}

// readRunnerInfo copies the info[...] a runner sends about itself.
func (s *Server) readRunnerInfo(c *call, r *runner) {
	c.setStr("info[name]", &r.name)
	c.setStr("info[version]", &r.version)
	c.setStr("info[revision]", &r.revision)
	c.setStr("info[platform]", &r.platform)
	c.setStr("info[architecture]", &r.architecture)
}

// SetRunnerActive pauses (false) or resumes a runner. A paused runner is
// handed no build (its register calls answer 404, "nothing to do") but may
// still report on the builds it runs.
func (s *Server) SetRunnerActive(runnerID int, active bool) {
	seedChange(s, "SetRunnerActive", "runner", s.runners, runnerID, func(r *runner) { r.active = active })
}

// SetBuildVariables adds variables a runner receives with a build: the
// YAML and job variables (public true) or the project's secret variables
// (public false). Runners receive them after the predefined ones, public
// first.
func (s *Server) SetBuildVariables(buildID int, vars map[string]string, public bool) {
	seedChange(s, "SetBuildVariables", "build", s.builds, buildID, func(b *build) {
		b.variables = append(b.variables, sortedVariables(vars, public)...)
	})
}

// SetBuildTrigger marks a build as made by a trigger, with the trigger's
// variables: the runner receives CI_BUILD_TRIGGERED=true and the variables
// last, as secrets.
func (s *Server) SetBuildTrigger(buildID int, vars map[string]string) {
	seedChange(s, "SetBuildTrigger", "build", s.builds, buildID, func(b *build) {
		b.triggered = true
		b.triggerVariables = append(b.triggerVariables, sortedVariables(vars, false)...)
	})
}

// sortedVariables turns vars into records, by key.
func sortedVariables(vars map[string]string, public bool) []buildVariable {
	out := make([]buildVariable, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, buildVariable{Key: k, Value: vars[k], Public: public})
	}
	return out
}

// SetMaxArtifactsSize sets the artifacts size limit in bytes (by default
// the max_artifacts_size setting, 100 MiB). Larger uploads get 413. A size
// below 1 is a mistake (see Err).
func (s *Server) SetMaxArtifactsSize(bytes int64) {
	s.setLimit("SetMaxArtifactsSize", &s.artifactsLimit, bytes)
}

// BuildTrace returns a build's stored trace, for tests.
func (s *Server) BuildTrace(buildID int) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.builds[buildID]; b != nil {
		return bytes.Clone(b.trace)
	}
	return nil
}

// BuildStatus returns a build's status and the id of the runner that has
// it (0 for none), for tests.
func (s *Server) BuildStatus(buildID int) (status string, runnerID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.builds[buildID]; b != nil {
		return b.status, b.runnerID
	}
	return "", 0
}

// BuildArtifacts returns a build's stored artifacts file and its name, for tests.
func (s *Server) BuildArtifacts(buildID int) (name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.builds[buildID]; b != nil && b.artifacts != nil {
		return b.artifactsName, bytes.Clone(b.artifacts)
	}
	return "", nil
}

// maxArtifactsBytes is the artifacts limit in bytes: SetMaxArtifactsSize's,
// or the max_artifacts_size setting's (in megabytes).
func (s *Server) maxArtifactsBytes() int64 {
	if s.artifactsLimit > 0 {
		return s.artifactsLimit
	}
	mb := defaultMaxArtifactsMB
	switch v := s.settings.values["max_artifacts_size"].(type) {
	case int:
		mb = v
	case int64:
		mb = int(v)
	case float64:
		mb = int(v)
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
			mb = n
		}
	}
	if mb <= 0 {
		mb = defaultMaxArtifactsMB
	}
	return int64(mb) << 20
}

func (s *Server) runnerByToken(tok string) *runner {
	if tok == "" {
		return nil
	}
	for _, r := range s.runners {
		if r.token == tok {
			return r
		}
	}
	return nil
}

// registerBuild hands the oldest pending build to the runner.
func (s *Server) registerBuild(c *call) error {
	r := s.runnerByToken(c.str("token"))
	if r == nil {
		return errForbidden
	}
	s.readRunnerInfo(c, r)
	r.contactedAt = s.now()
	if !r.active {
		return errNotFound("")
	}

	var next *build
	for _, b := range s.builds {
		if b.status != "pending" || b.erased || !s.canPick(r, b) {
			continue
		}
		if next == nil || b.createdAt.Before(next.createdAt) || (b.createdAt.Equal(next.createdAt) && b.id < next.id) {
			next = b
		}
	}
	if next == nil {
		return errNotFound("")
	}
	next.runnerID = r.id
	s.setBuildStatus(next, "running")
	return c.json(http.StatusCreated, s.registerJSON(next))
}

// registerJSON renders the build a runner must run.
func (s *Server) registerJSON(b *build) map[string]any {
	p := s.projects[b.projectID]
	m := s.dependencyJSON(b)
	beforeSHA := b.beforeSHA
	if beforeSHA == "" {
		beforeSHA = strings.Repeat("0", 40)
	}
	host := strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
	m["commands"] = b.commands
	m["repo_url"] = "http://gitlab-ci-token:" + p.runnersToken + "@" + host + "/" + s.projectFullPath(p) + ".git"
	m["before_sha"] = beforeSHA
	m["allow_git_fetch"] = true
	if !b.artifactsExpireAt.IsZero() {
		m["artifacts_expire_at"] = ts(b.artifactsExpireAt)
	}
	m["options"] = map[string]any{}
	m["timeout"] = 3600
	m["variables"] = s.buildVariables(b)
	deps := []any{}
	for _, d := range s.sortedBuilds() {
		if d.id != b.id && d.projectID == b.projectID && d.commitID == b.commitID && d.stage != b.stage &&
			d.status == "success" && d.createdAt.Before(b.createdAt.Add(time.Nanosecond)) && d.id < b.id && !d.erased {
			deps = append(deps, s.dependencyJSON(d))
		}
	}
	m["depends_on_builds"] = deps
	return m
}

// buildVariables lists only what deployed servers send, in their order:
// the predefined variables (the runner sets every other CI_* variable
// itself, and a value sent here would override its own), then the YAML
// and job variables, the project's secret variables and the trigger's.
func (s *Server) buildVariables(b *build) []buildVariable {
	vars := []buildVariable{}
	if b.tag {
		vars = append(vars, buildVariable{Key: "CI_BUILD_TAG", Value: b.ref, Public: true})
	}
	vars = append(vars, buildVariable{Key: "CI_BUILD_NAME", Value: b.name, Public: true},
		buildVariable{Key: "CI_BUILD_STAGE", Value: b.stage, Public: true})
	if b.triggered {
		vars = append(vars, buildVariable{Key: "CI_BUILD_TRIGGERED", Value: "true", Public: true})
	}
	for _, public := range []bool{true, false} {
		for _, v := range b.variables {
			if v.Public == public {
				vars = append(vars, v)
			}
		}
	}
	return append(vars, b.triggerVariables...)
}

// dependencyJSON renders the fields a build and its dependencies share.
func (s *Server) dependencyJSON(b *build) map[string]any {
	p := s.projects[b.projectID]
	m := map[string]any{
		"id": b.id, "ref": b.ref, "tag": b.tag, "sha": b.commitID, "status": b.status, "name": b.name,
		"token": p.runnersToken, "stage": b.stage, "project_id": p.id, "project_name": p.name,
	}
	if b.artifacts != nil {
		m["artifacts_file"] = map[string]any{"filename": b.artifactsName, "size": len(b.artifacts)}
	}
	return m
}

func (s *Server) sortedBuilds() []*build {
	out := make([]*build, 0, len(s.builds))
	for _, b := range s.builds {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b *build) int { return a.id - b.id })
	return out
}

// runnerStates are the states a runner may report.
var runnerStates = map[string]bool{"running": true, "success": true, "failed": true, "canceled": true}

// updateBuild applies a runner's state report and replaces the trace.
func (s *Server) updateBuild(c *call) error {
	r := s.runnerByToken(c.str("token"))
	if r == nil {
		return errForbidden
	}
	r.contactedAt = s.now()
	id, err := c.pathID("id")
	if err != nil {
		return err
	}
	b := s.builds[id]
	if b == nil || b.status != "running" || b.runnerID != r.id {
		return errNotFound("")
	}
	if b.erased {
		return errStatus(http.StatusForbidden, "403 Forbidden - Build has been erased!")
	}
	state := c.str("state")
	if state != "" && !runnerStates[state] {
		return errInvalid("state", "is invalid")
	}
	if c.has("trace") {
		b.trace = []byte(c.str("trace"))
	}
	if state != "" && state != b.status {
		s.setBuildStatus(b, state)
	}
	return c.json(http.StatusOK, s.buildJSON(b))
}

// buildTokenOK checks the BUILD-TOKEN header or token parameter against the
// build's project's runners token.
func (s *Server) buildTokenOK(c *call, b *build) bool {
	tok := c.r.Header.Get("BUILD-TOKEN")
	if tok == "" {
		tok = c.str("token")
	}
	p := s.projects[b.projectID]
	return p != nil && tok != "" && tok == p.runnersToken
}

// runnerBuild resolves {id} and checks the build token: 404 for a missing
// build, 403 for a bad token.
func (s *Server) runnerBuild(c *call) (*build, error) {
	id, err := c.pathID("id")
	if err != nil {
		return nil, err
	}
	b := s.builds[id]
	if b == nil || s.projects[b.projectID] == nil {
		return nil, errNotFound("")
	}
	if !s.buildTokenOK(c, b) {
		return nil, errForbidden
	}
	return b, nil
}

// appendTrace applies the trace append rules. The body is read before the
// state lock is taken.
func (s *Server) appendTrace(c *call) error {
	part, err := io.ReadAll(http.MaxBytesReader(c.w, c.r.Body, maxTracePart))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		return errBadRequest("400 (Bad request) unreadable body")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.runnerBuild(c)
	if err != nil {
		return err
	}
	if b.erased {
		return errStatus(http.StatusForbidden, "403 Forbidden - Build has been erased!")
	}
	cr := c.r.Header.Get("Content-Range")
	if strings.TrimSpace(cr) == "" {
		return errMissing("Content-Range")
	}
	start, err := rangeStart(cr)
	if err != nil {
		return errBadRequest("400 (Bad request) malformed Content-Range")
	}
	if start != int64(len(b.trace)) {
		c.w.Header().Set("Range", "0-"+strconv.Itoa(len(b.trace)))
		return errError(http.StatusRequestedRangeNotSatisfiable, "416 Range Not Satisfiable")
	}
	// Copy on append: a download may be streaming the old slice.
	b.trace = append(b.trace[:len(b.trace):len(b.trace)], part...)
	c.w.Header().Set("Build-Status", b.status)
	c.w.Header().Set("Range", "0-"+strconv.Itoa(len(b.trace)))
	c.w.WriteHeader(http.StatusAccepted)
	return nil
}

// rangeStart reads the start of "<start>-<end>", with an optional "bytes"
// unit, as the deployed server does (only the start is checked).
func rangeStart(h string) (int64, error) {
	s := strings.TrimSpace(h)
	if len(s) >= 5 && strings.EqualFold(s[:5], "bytes") {
		s = strings.TrimLeft(s[5:], " =")
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return 0, errors.New("no dash")
	}
	n, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad start %q", a)
	}
	return n, nil
}

// uploadArtifacts stores a multipart "file" as the build's artifacts. It
// checks the token and state, reads the body without the lock, then checks
// the state again before storing.
func (s *Server) uploadArtifacts(c *call) error {
	check := func() (*build, error) {
		b, err := s.runnerBuild(c)
		if err == nil && (b.erased || b.status != "running") {
			err = errForbidden
		}
		return b, err
	}
	s.mu.Lock()
	_, err := check()
	limit := s.maxArtifactsBytes()
	s.mu.Unlock()
	if err != nil {
		return err
	}
	var expireAt time.Time
	if v := strings.TrimSpace(c.str("expire_in")); v != "" {
		d, err := parseExpireIn(v)
		if err != nil {
			return errInvalid("expire_in", "is invalid")
		}
		expireAt = s.now().Add(d)
	}
	name, data, status := readArtifactsFile(c, limit)
	switch status {
	case http.StatusRequestEntityTooLarge:
		return errTooLarge
	case http.StatusBadRequest:
		return errMissing("file")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := check()
	if err != nil {
		return err
	}
	b.artifacts, b.artifactsName, b.artifactsExpireAt = data, name, expireAt
	return c.json(http.StatusCreated, s.registerJSON(b))
}

// readArtifactsFile reads the "file" part of a multipart body up to limit
// bytes. It returns 413 when the file is larger and 400 when there is none.
func readArtifactsFile(c *call, limit int64) (name string, data []byte, status int) {
	ct, _, _ := mime.ParseMediaType(c.r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		return "", nil, http.StatusBadRequest
	}
	// Bound the whole body too, for parts other than the file.
	c.r.Body = http.MaxBytesReader(c.w, c.r.Body, limit+1<<20)
	mr, err := c.r.MultipartReader()
	if err != nil {
		return "", nil, http.StatusBadRequest
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return "", nil, http.StatusRequestEntityTooLarge
			}
			return "", nil, http.StatusBadRequest
		}
		if part.FormName() != "file" {
			continue
		}
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(part, limit+1))
		var tooLarge *http.MaxBytesError
		switch {
		case n > limit || errors.As(err, &tooLarge):
			return "", nil, http.StatusRequestEntityTooLarge
		case err != nil:
			return "", nil, http.StatusBadRequest
		}
		name = part.FileName()
		if name == "" {
			name = "artifacts.zip"
		}
		return name, buf.Bytes(), http.StatusOK
	}
}

// parseExpireIn reads durations such as "7 days", "1 week", "3 hours" or
// "30 mins", and plain seconds.
func parseExpireIn(v string) (time.Duration, error) {
	fields := strings.Fields(strings.ToLower(v))
	if len(fields) == 1 {
		// "7d" or "3600"
		i := strings.IndexFunc(fields[0], func(r rune) bool { return r < '0' || r > '9' })
		if i < 0 {
			fields = append(fields, "seconds")
		} else if i > 0 {
			fields = []string{fields[0][:i], fields[0][i:]}
		}
	}
	if len(fields) != 2 {
		return 0, errors.New("want <number> <unit>")
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n <= 0 {
		return 0, errors.New("bad number")
	}
	units := map[string]time.Duration{
		"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
		"w": 7 * 24 * time.Hour, "wk": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
		"mo": 30 * 24 * time.Hour, "month": 30 * 24 * time.Hour, "months": 30 * 24 * time.Hour,
		"y": 365 * 24 * time.Hour, "year": 365 * 24 * time.Hour, "years": 365 * 24 * time.Hour,
	}
	u, ok := units[fields[1]]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", fields[1])
	}
	if n > int(100*365*24*time.Hour/u) {
		return 0, errors.New("too long")
	}
	return time.Duration(n) * u, nil
}

// downloadArtifacts streams the build's artifacts file.
func (s *Server) downloadArtifacts(c *call) error {
	b, err := s.runnerBuild(c)
	if err != nil {
		return err
	}
	if b.artifacts == nil || b.erased {
		return errNotFound("")
	}
	return sendArtifacts(c, b)
}

// deleteArtifacts removes the build's artifacts file (200 even when none).
func (s *Server) deleteArtifacts(c *call) error {
	b, err := s.runnerBuild(c)
	if err != nil {
		return err
	}
	b.artifacts, b.artifactsName, b.artifactsExpireAt = nil, "", time.Time{}
	return c.json(http.StatusOK, s.buildJSON(b))
}
