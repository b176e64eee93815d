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
