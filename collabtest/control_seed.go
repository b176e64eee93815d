package collabtest

import (
	"errors"
	"fmt"
	"net/http"
	"sort"
)

// seedSpec is the body of POST /-/collabtest/seed: the records to make, in
// this order, as the Go seeding helpers make them. Users are named by
// username, groups by path, projects by full path (namespace/path).
type seedSpec struct {
	Users []struct {
		Username string `json:"username"`
		Admin    bool   `json:"admin"`
	} `json:"users"`
	Tokens []struct {
		User string `json:"user"`
		Kind string `json:"kind"` // private, oauth or personal_access
	} `json:"tokens"`
	Groups []struct {
		Name       string            `json:"name"`
		Path       string            `json:"path"`
		Owner      string            `json:"owner"`
		Visibility string            `json:"visibility"`
		Members    map[string]string `json:"members"` // username: access level
	} `json:"groups"`
	Projects []seedProject `json:"projects"`
	Issues   []struct {
		Project string     `json:"project"`
		Author  string     `json:"author"`
		Title   string     `json:"title"`
		Labels  []string   `json:"labels"`
		Notes   []seedNote `json:"notes"`
	} `json:"issues"`
	MergeRequests []struct {
		Project string     `json:"project"`
		Author  string     `json:"author"`
		Source  string     `json:"source_branch"`
		Target  string     `json:"target_branch"`
		Title   string     `json:"title"`
		Notes   []seedNote `json:"notes"`
	} `json:"merge_requests"`
	Builds []struct {
		Project string `json:"project"`
		Name    string `json:"name"`
		Stage   string `json:"stage"`
		Ref     string `json:"ref"`
		Status  string `json:"status"`
		Trace   string `json:"trace"`
	} `json:"builds"`
	Runners []struct {
		Description string `json:"description"`
	} `json:"runners"`
}

// seedProject is a project of a seedSpec.
type seedProject struct {
	Name       string            `json:"name"`
	Owner      string            `json:"owner"`
	Group      string            `json:"group"` // "" for the owner's namespace
	Visibility string            `json:"visibility"`
	Members    map[string]string `json:"members"`
	Branches   []string          `json:"branches"`
}

type seedNote struct {
	Author string `json:"author"`
	Body   string `json:"body"`
}

// seedResult is the answer: what was made, with ids and tokens.
type seedResult struct {
	Users         map[string]seedUser `json:"users"`
	Tokens        []string            `json:"tokens"`
	Groups        map[string]int      `json:"groups"`
	Projects      map[string]int      `json:"projects"`
	Issues        []int               `json:"issues"`
	MergeRequests []int               `json:"merge_requests"`
	Notes         []int               `json:"notes"`
	Builds        []int               `json:"builds"`
	Runners       []seedRunner        `json:"runners"`
}

type seedUser struct {
	ID    int    `json:"id"`
	Token string `json:"token"`
}

type seedRunner struct {
	ID    int    `json:"id"`
	Token string `json:"token"`
}

var (
	visibilityNames = map[string]int{"private": visPrivate, "internal": visInternal, "public": visPublic}
	levelNames      = map[string]int{
		"guest": levelGuest, "reporter": levelReporter, "developer": levelDeveloper, "master": levelMaster, "owner": levelOwner,
	}
	tokenKindNames = map[string]TokenKind{"private": PrivateToken, "oauth": OAuthToken, "personal_access": PersonalAccessToken}
)

// controlSeed makes what the body lists. It stops at the first mistake:
// the answer (400) names it, and what was made before it stays.
func (s *Server) controlSeed(r *http.Request) (int, any, error) {
	var spec seedSpec
	if err := decodeControl(r, &spec); err != nil {
		return 0, nil, err
	}
	res := seedResult{Users: map[string]seedUser{}, Tokens: []string{}, Groups: map[string]int{}, Projects: map[string]int{},
		Issues: []int{}, MergeRequests: []int{}, Notes: []int{}, Builds: []int{}, Runners: []seedRunner{}}
	if err := s.seed(&spec, &res); err != nil {
		return 0, nil, errStatus(http.StatusBadRequest, "400 (Bad request) seed: "+err.Error()+"; made before it: "+res.summary())
	}
	return http.StatusCreated, res, nil
}

// summary counts what res holds, for an error message.
func (res *seedResult) summary() string {
	return fmt.Sprintf("%d users, %d tokens, %d groups, %d projects, %d issues, %d merge requests, %d notes, %d builds, %d runners",
		len(res.Users), len(res.Tokens), len(res.Groups), len(res.Projects), len(res.Issues), len(res.MergeRequests),
		len(res.Notes), len(res.Builds), len(res.Runners))
}

// seeder resolves names and notices a helper's mistake by the count of
// mistakes kept for Err.
type seeder struct {
	s    *Server
	errs int
}

// failed returns the mistakes reported since the last call, if any.
func (sd *seeder) failed() error {
	sd.s.reportMu.Lock()
	defer sd.s.reportMu.Unlock()
	errs := sd.s.seedErrs[sd.errs:]
	sd.errs = len(sd.s.seedErrs)
	return errors.Join(errs...)
}

// lookup runs find (which returns 0 for none) with the state locked.
func (sd *seeder) lookup(kind, key string, find func() int) (int, error) {
	sd.s.mu.Lock()
	id := find()
	sd.s.mu.Unlock()
	if id == 0 {
		return 0, fmt.Errorf("no %s %q", kind, key)
	}
	return id, nil
}

func (sd *seeder) user(name string) (int, error) {
	return sd.lookup("user", name, func() int { return idOrZero(sd.s.findUser(name), func(u *user) int { return u.id }) })
}

func (sd *seeder) project(path string) (int, error) {
	return sd.lookup("project", path, func() int { return idOrZero(sd.s.lookupProject(path), func(p *project) int { return p.id }) })
}

func (sd *seeder) group(path string) (int, error) {
	return sd.lookup("group", path, func() int { return idOrZero(sd.s.lookupGroup(path), func(g *group) int { return g.id }) })
}

// idOrZero is the id of v, or 0 for nil.
func idOrZero[T any](v *T, id func(*T) int) int {
	if v == nil {
		return 0
	}
	return id(v)
}

func (sd *seeder) fullPath(projectID int) string {
	sd.s.mu.Lock()
	defer sd.s.mu.Unlock()
	return sd.s.projectFullPath(sd.s.projects[projectID])
}

// ownerAndVisibility resolves a group's or project's owner and its
// visibility by name ("" is private).
func (sd *seeder) ownerAndVisibility(owner, visibility string) (uid, vis int, err error) {
	if uid, err = sd.user(owner); err != nil {
		return 0, 0, err
	}
	if visibility == "" {
		return uid, visPrivate, nil
	}
	vis, ok := visibilityNames[visibility]
	if !ok {
		return 0, 0, fmt.Errorf("visibility %q is not private, internal or public", visibility)
	}
	return uid, vis, nil
}

// members gives each username its level, in username order, with add.
func (sd *seeder) members(m map[string]string, add func(userID int, level int)) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		uid, err := sd.user(name)
		if err != nil {
			return err
		}
		level, ok := levelNames[m[name]]
		if !ok {
			return fmt.Errorf("access level %q of %s is not guest, reporter, developer, master or owner", m[name], name)
		}
		add(uid, level)
		if err := sd.failed(); err != nil {
			return err
		}
	}
	return nil
}

// notes adds the notes on one issue or merge request.
func (sd *seeder) notes(projectID int, kind string, id int, notes []seedNote, res *seedResult) error {
	for _, n := range notes {
		author, err := sd.user(n.Author)
		if err != nil {
			return err
		}
		nid := sd.s.AddNote(projectID, kind, id, author, n.Body)
		if err := sd.failed(); err != nil {
			return err
		}
		res.Notes = append(res.Notes, nid)
	}
	return nil
}

// seed makes spec's records in order, recording each in res.
func (s *Server) seed(spec *seedSpec, res *seedResult) error {
	s.reportMu.Lock()
	sd := &seeder{s: s, errs: len(s.seedErrs)} // only mistakes from now on count
	s.reportMu.Unlock()
	for _, step := range []func(*seedSpec, *seedResult) error{
		sd.users, sd.tokens, sd.groups, sd.projects, sd.tickets, sd.builds, sd.runners,
	} {
		if err := step(spec, res); err != nil {
			return err
		}
	}
	return sd.failed()
}

func (sd *seeder) users(spec *seedSpec, res *seedResult) error {
	for _, u := range spec.Users {
		made := sd.s.AddUser(u.Username, u.Admin)
		if err := sd.failed(); err != nil {
			return err
		}
		res.Users[u.Username] = seedUser{made.ID, made.Token}
	}
	return nil
}

func (sd *seeder) tokens(spec *seedSpec, res *seedResult) error {
	for _, t := range spec.Tokens {
		uid, err := sd.user(t.User)
		if err != nil {
			return err
		}
		kind, ok := tokenKindNames[t.Kind]
		if !ok {
			return fmt.Errorf("token kind %q is not private, oauth or personal_access", t.Kind)
		}
		res.Tokens = append(res.Tokens, sd.s.AddToken(uid, kind))
	}
	return nil
}

func (sd *seeder) groups(spec *seedSpec, res *seedResult) error {
	s := sd.s
	for _, g := range spec.Groups {
		owner, vis, err := sd.ownerAndVisibility(g.Owner, g.Visibility)
		if err != nil {
			return err
		}
		gid := s.AddGroup(owner, g.Name, g.Path, vis)
		if err := sd.failed(); err != nil {
			return err
		}
		res.Groups[g.Path] = gid
		if err := sd.members(g.Members, func(uid int, l int) { s.AddGroupMember(gid, uid, l) }); err != nil {
			return err
		}
	}
	return nil
}

func (sd *seeder) projects(spec *seedSpec, res *seedResult) error {
	for i := range spec.Projects {
		if err := sd.makeProject(&spec.Projects[i], res); err != nil {
			return err
		}
	}
	return nil
}

// makeProject makes one project, in its group if it names one, with its
// members and branches.
func (sd *seeder) makeProject(p *seedProject, res *seedResult) error {
	s := sd.s
	owner, vis, err := sd.ownerAndVisibility(p.Owner, p.Visibility)
	if err != nil {
		return err
	}
	var pid int
	if p.Group == "" {
		pid = s.AddProject(owner, p.Name, vis)
	} else {
		gid, err := sd.group(p.Group)
		if err != nil {
			return err
		}
		pid = s.AddGroupProject(gid, owner, p.Name, vis)
	}
	if err := sd.failed(); err != nil {
		return err
	}
	res.Projects[sd.fullPath(pid)] = pid
	if err := sd.members(p.Members, func(uid int, l int) { s.AddMember(pid, uid, l) }); err != nil {
		return err
	}
	for _, b := range p.Branches {
		s.AddBranch(pid, b, "")
		if err := sd.failed(); err != nil {
			return err
		}
	}
	return nil
}

// tickets makes the issues, then the merge requests, with their notes.
func (sd *seeder) tickets(spec *seedSpec, res *seedResult) error {
	s := sd.s
	for _, is := range spec.Issues {
		if err := sd.ticket("Issue", is.Project, is.Author, is.Notes, res, &res.Issues, func(pid, uid int) int {
			return s.AddIssue(pid, uid, is.Title, is.Labels...)
		}); err != nil {
			return err
		}
	}
	for _, mr := range spec.MergeRequests {
		if err := sd.ticket("MergeRequest", mr.Project, mr.Author, mr.Notes, res, &res.MergeRequests, func(pid, uid int) int {
			return s.AddMergeRequest(pid, uid, mr.Source, mr.Target, mr.Title)
		}); err != nil {
			return err
		}
	}
	return nil
}

func (sd *seeder) builds(spec *seedSpec, res *seedResult) error {
	for _, b := range spec.Builds {
		pid, err := sd.project(b.Project)
		if err != nil {
			return err
		}
		id := sd.s.AddBuild(pid, BuildSpec{Name: b.Name, Stage: b.Stage, Ref: b.Ref, Status: b.Status, Trace: b.Trace})
		if err := sd.failed(); err != nil {
			return err
		}
		res.Builds = append(res.Builds, id)
	}
	return nil
}

func (sd *seeder) runners(spec *seedSpec, res *seedResult) error {
	for _, r := range spec.Runners {
		id, token := sd.s.AddRunner(r.Description)
		res.Runners = append(res.Runners, seedRunner{id, token})
	}
	return nil
}

// ticket makes an issue or merge request (kind) with add, in a project by
// an author, records its id in ids, then adds its notes.
func (sd *seeder) ticket(kind, project, author string, notes []seedNote, res *seedResult, ids *[]int, add func(pid, uid int) int) error {
	pid, err := sd.project(project)
	if err != nil {
		return err
	}
	uid, err := sd.user(author)
	if err != nil {
		return err
	}
	id := add(pid, uid)
	if err := sd.failed(); err != nil {
		return err
	}
	*ids = append(*ids, id)
	return sd.notes(pid, kind, id, notes, res)
}
