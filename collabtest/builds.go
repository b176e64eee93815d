package collabtest

import "time"

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

func (s *Server) buildRoutes() {}

// BuildSpec seeds a build with AddBuild. Zero fields get plausible defaults.
type BuildSpec struct {
	Name, Stage, Ref string // defaults: "test", "test", "master"
	Status           string // default "pending"
	Commit           string // commit id; default: the head of Ref
	CommitMessage    string
	UserID           int    // default: the project creator
	Commands         string // lines joined by "\n"
	Artifacts        []byte // stored as artifacts.zip when non-nil
	Trace            string
	Tag              bool
}

// AddBuild seeds a build in a project and returns its id.
func (s *Server) AddBuild(projectID int, spec BuildSpec) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.projects[projectID]
	if p == nil {
		return 0
	}
	b := &build{
		id: s.newID(), projectID: projectID, name: or(spec.Name, "test"), stage: or(spec.Stage, "test"),
		ref: or(spec.Ref, "master"), tag: spec.Tag, status: or(spec.Status, "pending"), createdAt: s.now(),
		userID: spec.UserID, commitID: spec.Commit, commitMessage: or(spec.CommitMessage, "Update"),
		commands: spec.Commands, trace: []byte(spec.Trace),
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
		b.artifacts, b.artifactsName = spec.Artifacts, "artifacts.zip"
	}
	if b.status != "pending" {
		b.startedAt = b.createdAt
		if b.status != "running" {
			b.finishedAt = b.createdAt
		}
	}
	s.builds[b.id] = b
	s.buildStatusChanged(b)
	return b.id
}

// SetBuildStatus moves a build to status, as a runner would, and lets merge
// requests waiting on it react.
func (s *Server) SetBuildStatus(buildID int, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.builds[buildID]; b != nil {
		b.status = status
		switch status {
		case "running":
			b.startedAt = s.now()
		case "success", "failed", "canceled":
			b.finishedAt = s.now()
		}
		s.buildStatusChanged(b)
	}
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// buildJSON renders a build as the consumer API and the runner's artifacts
// upload return it.
func (s *Server) buildJSON(b *build) map[string]any {
	var artifacts any
	if b.artifacts != nil {
		artifacts = map[string]any{"filename": b.artifactsName, "size": len(b.artifacts)}
	}
	var rn any
	if r := s.runners[b.runnerID]; r != nil {
		rn = map[string]any{"id": r.id, "description": r.description, "active": r.active, "is_shared": r.isShared, "name": orNil(r.name)}
	}
	var coverage any
	if b.coverage != nil {
		coverage = *b.coverage
	}
	var u any
	if usr := s.users[b.userID]; usr != nil {
		u = usr.full(s.URL)
	}
	author := s.users[b.userID]
	authorName, authorEmail := "", ""
	if author != nil {
		authorName, authorEmail = author.name, author.email
	}
	return map[string]any{
		"id": b.id, "name": b.name, "stage": b.stage, "ref": b.ref, "tag": b.tag, "status": b.status,
		"coverage": coverage, "created_at": ts(b.createdAt), "started_at": ts(b.startedAt), "finished_at": ts(b.finishedAt),
		"runner": rn, "artifacts_file": artifacts, "user": u,
		"commit": map[string]any{
			"id": b.commitID, "short_id": b.commitID[:min(8, len(b.commitID))], "title": b.commitMessage, "message": b.commitMessage,
			"author_name": authorName, "author_email": authorEmail, "created_at": ts(b.createdAt),
		},
	}
}
