package collabtest

import (
	"time"

	"github.com/collabsvc/collab"
)

// db is the whole in-memory state. Every field is guarded by Server.mu.
// Each resource's record type lives in the file of its routes and
// handlers; users, tokens and project events, which every resource uses,
// live here.
type db struct {
	lastID        int
	users         map[int]*user
	tokens        map[string]*token
	projects      map[int]*project
	groups        map[int]*group
	events        []*event
	hooks         map[int]*hook
	issues        map[int]*issue
	mergeRequests map[int]*mergeRequest
	labels        map[int]*label
	notes         map[int]*note
	milestones    map[int]*milestone
	awards        map[int]*award
	builds        map[int]*build
	runners       map[int]*runner
	uploads       map[string][]byte // by upload URL
	settings      *appSettings
	// attachmentLimit and artifactsLimit override the settings' upload
	// limits, in bytes, when > 0.
	attachmentLimit, artifactsLimit int64
	// runnersRegistrationToken is the settings' shared runners
	// registration token, made on first use.
	runnersRegistrationToken string
}

func (d *db) init() {
	d.users = map[int]*user{}
	d.tokens = map[string]*token{}
	d.projects = map[int]*project{}
	d.groups = map[int]*group{}
	d.hooks = map[int]*hook{}
	d.issues = map[int]*issue{}
	d.mergeRequests = map[int]*mergeRequest{}
	d.labels = map[int]*label{}
	d.notes = map[int]*note{}
	d.milestones = map[int]*milestone{}
	d.awards = map[int]*award{}
	d.builds = map[int]*build{}
	d.runners = map[int]*runner{}
	d.uploads = map[string][]byte{}
	d.settings = defaultSettings()
}

type token struct {
	userID int
	kind   TokenKind
}

type user struct {
	id                                     int
	username, name, email, state           string
	admin, canCreateGroup                  bool
	createdAt                              time.Time
	bio, linkedin, skype, twitter, website string
	namespaceID                            int // the user's personal namespace
}

// userJSON renders the brief form of user id, or null.
func (s *Server) userJSON(id int) any {
	if u := s.users[id]; u != nil {
		return reply(u.record(s.URL), briefUserOmit...)
	}
	return nil
}

// Event actions recorded as projects change.
const (
	actionOpened    = "opened"
	actionClosed    = "closed"
	actionCommented = "commented on"
	actionCreated   = "created"
	actionUpdated   = "updated"
	actionMerged    = "accepted"
	actionJoined    = "joined"
)

type event struct {
	id, projectID, authorID int
	action                  string
	targetType              string // Issue, MergeRequest, Note, Milestone or ""
	targetID                int
	targetTitle             string
	noteID                  int              // for comment events
	data                    *collab.PushData // push events: the push data
	createdAt               time.Time
}

// addEvent records project activity; GET /projects/{id}/events lists it newest first.
func (s *Server) addEvent(projectID, authorID int, action, targetType string, targetID int, targetTitle string, noteID int) {
	s.events = append(s.events, &event{
		id: s.newID(), projectID: projectID, authorID: authorID, action: action,
		targetType: targetType, targetID: targetID, targetTitle: targetTitle, noteID: noteID, createdAt: s.now(),
	})
	if p := s.projects[projectID]; p != nil {
		p.lastActivityAt = s.now()
	}
}
