package collabtest

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
)

type label struct {
	id, projectID            int
	name, color, description string
	subscribers              map[int]bool
	createdAt, updatedAt     time.Time
}

var colorRE = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

// Labels are addressed by name, a parameter, except for subscriptions,
// which take an id or a name in the path.
func (s *Server) labelRoutes() {
	s.api("GET /projects/{id}/labels", rule{}, s.listLabels)
	s.api("POST /projects/{id}/labels", rule{level: levelReporter}, s.createLabel)
	s.api("PUT /projects/{id}/labels", rule{level: levelReporter}, s.updateLabel)
	s.api("DELETE /projects/{id}/labels", rule{level: levelReporter}, s.deleteLabel)
	s.api("POST /projects/{id}/labels/{label_id}/subscription", rule{}, s.subscribeLabel(true))
	s.api("DELETE /projects/{id}/labels/{label_id}/subscription", rule{}, s.subscribeLabel(false))
}

// ensureLabels creates labels a request names that the project lacks, as
// the server does when an issue or merge request is labelled.
func (s *Server) ensureLabels(projectID int, names []string) {
	for _, name := range names {
		if s.findLabel(projectID, name) == nil {
			now := s.now()
			l := &label{id: s.newID(), projectID: projectID, name: name, color: "#428BCA", subscribers: map[int]bool{}, createdAt: now, updatedAt: now}
			s.labels[l.id] = l
		}
	}
}

// findLabel finds a project's label by name.
func (s *Server) findLabel(projectID int, name string) *label {
	for _, l := range s.labels {
		if l.projectID == projectID && l.name == name {
			return l
		}
	}
	return nil
}

// labelJSON renders a label with counts computed from live issues and merge requests.
func (s *Server) labelJSON(l *label, u *user, omit ...string) any {
	openIssues, closedIssues, openMRs := 0, 0, 0
	for _, is := range s.issues {
		if is.projectID == l.projectID && !is.deleted && slices.Contains(is.labels, l.name) {
			if is.state == "opened" {
				openIssues++
			} else {
				closedIssues++
			}
		}
	}
	for _, mr := range s.mergeRequests {
		if mr.projectID == l.projectID && !mr.deleted && mr.isOpen() && slices.Contains(mr.labels, l.name) {
			openMRs++
		}
	}
	return reply(&collab.Label{
		Name: l.name, Color: l.color, Description: serverform.Str(l.description),
		OpenIssuesCount: openIssues, ClosedIssuesCount: closedIssues, OpenMergeRequestsCount: openMRs,
		Subscribed: u != nil && l.subscribers[u.id],
	}, omit...)
}

// labelCountsOmit are the keys create and update answers leave out.
var labelCountsOmit = []string{"open_issues_count", "closed_issues_count", "open_merge_requests_count", "subscribed"}

func (s *Server) listLabels(c *call) error {
	var out []*label
	for _, l := range s.labels {
		if l.projectID == c.project.id {
			out = append(out, l)
		}
	}
	sortItems(c, out, "asc", func(l *label) string { return l.name }, func(l *label) int { return l.id })
	return all(c, out, func(l *label) any { return s.labelJSON(l, c.user) })
}

// labelName reads a label name parameter; its validation errors use the
// key "title", as the server's do.
func (c *call) labelName(param string, required bool) (string, bool, error) {
	name, present, err := c.nameParam(param, "title", required)
	if err == nil && strings.Contains(name, ",") {
		return "", true, errInvalid("title", "is invalid")
	}
	return name, present, err
}

func (s *Server) createLabel(c *call) error {
	p := c.project
	name, _, err := c.labelName("name", true)
	if err != nil {
		return err
	}
	color := c.str("color")
	switch {
	case color == "":
		return errMissing("color")
	case !colorRE.MatchString(color):
		return errInvalid("color", "must be a valid color code")
	case s.findLabel(p.id, name) != nil:
		return errConflict("Label already exists")
	}
	now := s.now()
	l := &label{id: s.newID(), projectID: p.id, name: name, color: color, subscribers: map[int]bool{}, createdAt: now, updatedAt: now}
	c.setStr("description", &l.description)
	s.labels[l.id] = l
	return c.json(http.StatusCreated, s.labelJSON(l, nil, labelCountsOmit...))
}

// namedLabel resolves the name parameter, answering 400 or 404.
func (c *call) namedLabel() (*label, error) {
	name := c.str("name")
	if name == "" {
		return nil, errMissing("name")
	}
	l := c.s.findLabel(c.project.id, name)
	if l == nil {
		return nil, errNotFound("Label")
	}
	return l, nil
}

// updateLabel renames or recolours; a rename follows onto issues and merge requests.
func (s *Server) updateLabel(c *call) error {
	p := c.project
	l, err := c.namedLabel()
	if err != nil {
		return err
	}
	newName, _, err := c.labelName("new_name", false)
	if err != nil && c.str("new_name") != "" {
		return err
	}
	color := c.str("color")
	switch {
	case newName == "" && color == "":
		return errBadRequest(`400 (Bad request) "new_name" or "color" not given`)
	case color != "" && !colorRE.MatchString(color):
		return errInvalid("color", "must be a valid color code")
	case newName != "" && newName != l.name && s.findLabel(p.id, newName) != nil:
		return errInvalid("title", "has already been taken")
	}
	if newName != "" && newName != l.name {
		rename := func(labels []string) {
			for i, n := range labels {
				if n == l.name {
					labels[i] = newName
				}
			}
		}
		for _, t := range append(s.tickets("Issue"), s.tickets("MergeRequest")...) {
			if t.projectID == p.id {
				rename(t.labels)
			}
		}
		l.name = newName
	}
	if color != "" {
		l.color = color
	}
	c.setStr("description", &l.description)
	l.updatedAt = s.now()
	return c.json(http.StatusOK, s.labelJSON(l, nil, labelCountsOmit...))
}

// deleteLabel answers with the label's other record shape.
func (s *Server) deleteLabel(c *call) error {
	l, err := c.namedLabel()
	if err != nil {
		return err
	}
	delete(s.labels, l.id)
	return c.json(http.StatusOK, reply(&collab.DeletedLabel{ID: l.id, Title: l.name, Color: l.color,
		Description: serverform.Str(l.description), ProjectID: l.projectID, CreatedAt: apiTime(l.createdAt),
		UpdatedAt: apiTime(l.updatedAt)}, "priority"))
}

// subscribeLabel addresses the label by name or by id.
func (s *Server) subscribeLabel(on bool) handler {
	return func(c *call) error {
		p := c.project
		key := c.str("label_id")
		l := s.findLabel(p.id, key)
		if byID := s.labels[atoi(key)]; l == nil && isDigits(key) && byID != nil && byID.projectID == p.id {
			l = byID
		}
		if l == nil {
			return errNotFound("Label")
		}
		return c.toggleCaller(l.subscribers, on, func() any { return s.labelJSON(l, c.user) })
	}
}
