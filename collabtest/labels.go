package collabtest

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

type label struct {
	id, projectID            int
	name, color, description string
	subscribers              map[int]bool
	createdAt, updatedAt     time.Time
}

var colorRE = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

func (s *Server) labelRoutes() {
	s.handle("GET", "/projects/:id/labels", s.listLabels)
	s.handle("POST", "/projects/:id/labels", s.createLabel)
	s.handle("PUT", "/projects/:id/labels", s.updateLabel)
	s.handle("DELETE", "/projects/:id/labels", s.deleteLabel)
	s.handle("POST", "/projects/:id/labels/:label_id/subscription", s.subscribeLabel(true))
	s.handle("DELETE", "/projects/:id/labels/:label_id/subscription", s.subscribeLabel(false))
}

// labelJSON renders a label with counts computed from live issues and merge requests.
func (s *Server) labelJSON(l *label, u *user) map[string]any {
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
	return map[string]any{
		"name": l.name, "color": l.color, "description": orNil(l.description),
		"open_issues_count": openIssues, "closed_issues_count": closedIssues, "open_merge_requests_count": openMRs,
		"subscribed": u != nil && l.subscribers[u.id],
	}
}

func (s *Server) listLabels(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	var out []*label
	for _, l := range s.labels {
		if l.projectID == p.id {
			out = append(out, l)
		}
	}
	sortItems(c, out, "asc", func(l *label) string { return l.name }, func(l *label) int { return l.id })
	all(c, out, func(l *label) any { return s.labelJSON(l, c.user) })
}

func (s *Server) createLabel(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 20) {
		return
	}
	name, color := strings.TrimSpace(c.str("name")), c.str("color")
	switch {
	case name == "":
		c.missing("name")
	case color == "":
		c.missing("color")
	case !colorRE.MatchString(color):
		c.invalid(map[string]any{"color": []string{"must be a valid color code"}})
	case strings.ContainsAny(name, ","):
		c.invalid(map[string]any{"title": []string{"is invalid"}})
	case s.findLabel(p.id, name) != nil:
		c.conflict("Label already exists")
	default:
		now := s.now()
		l := &label{id: s.newID(), projectID: p.id, name: name, color: color, subscribers: map[int]bool{}, createdAt: now, updatedAt: now}
		c.setStr("description", &l.description)
		s.labels[l.id] = l
		c.json(http.StatusCreated, map[string]any{"name": l.name, "color": l.color, "description": orNil(l.description)})
	}
}

// namedLabel resolves the name parameter, answering 400 or 404.
func (c *call) namedLabel(p *project) *label {
	name := c.str("name")
	if name == "" {
		c.missing("name")
		return nil
	}
	l := c.s.findLabel(p.id, name)
	if l == nil {
		c.notFound("Label")
	}
	return l
}

// updateLabel renames or recolours; a rename follows onto issues and merge requests.
func (s *Server) updateLabel(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 20) {
		return
	}
	l := c.namedLabel(p)
	if l == nil {
		return
	}
	newName, color := strings.TrimSpace(c.str("new_name")), c.str("color")
	switch {
	case newName == "" && color == "":
		c.badRequest(`400 (Bad request) "new_name" or "color" not given`)
		return
	case color != "" && !colorRE.MatchString(color):
		c.invalid(map[string]any{"color": []string{"must be a valid color code"}})
		return
	case newName != "" && newName != l.name && s.findLabel(p.id, newName) != nil:
		c.invalid(map[string]any{"title": []string{"has already been taken"}})
		return
	}
	if newName != "" && newName != l.name {
		rename := func(labels []string) {
			for i, n := range labels {
				if n == l.name {
					labels[i] = newName
				}
			}
		}
		for _, is := range s.issues {
			if is.projectID == p.id {
				rename(is.labels)
			}
		}
		for _, mr := range s.mergeRequests {
			if mr.projectID == p.id {
				rename(mr.labels)
			}
		}
		l.name = newName
	}
	if color != "" {
		l.color = color
	}
	c.setStr("description", &l.description)
	l.updatedAt = s.now()
	c.json(http.StatusOK, map[string]any{"name": l.name, "color": l.color, "description": orNil(l.description)})
}

// deleteLabel answers with the label's other record shape.
func (s *Server) deleteLabel(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 20) {
		return
	}
	l := c.namedLabel(p)
	if l == nil {
		return
	}
	delete(s.labels, l.id)
	c.json(http.StatusOK, map[string]any{"id": l.id, "title": l.name, "color": l.color, "description": orNil(l.description),
		"project_id": l.projectID, "template": false, "created_at": ts(l.createdAt), "updated_at": ts(l.updatedAt)})
}

// subscribeLabel addresses the label by id or by name.
func (s *Server) subscribeLabel(on bool) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		key := c.params["label_id"]
		l := s.findLabel(p.id, key)
		if id, err := strconv.Atoi(key); l == nil && err == nil {
			if byID := s.labels[id]; byID != nil && byID.projectID == p.id {
				l = byID
			}
		}
		if l == nil {
			c.notFound("Label")
			return
		}
		c.toggleCaller(l.subscribers, on, func() any { return s.labelJSON(l, c.user) })
	}
}
