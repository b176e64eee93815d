package collabtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// appSettings holds the application settings by their JSON names, so that
// fields this fake does not know survive a PUT.
type appSettings struct {
	values    map[string]any
	createdAt time.Time
	updatedAt time.Time
}

// settingKinds types every known setting; unknown ones are stored as strings.
var settingKinds = map[string]string{
	"default_projects_limit": "int", "signup_enabled": "bool", "signin_enabled": "bool", "gravatar_enabled": "bool",
	"avatar_provider_enabled": "bool", "sign_in_text": "string", "after_sign_up_text": "string", "home_page_url": "string",
	"default_branch_protection": "int", "restricted_visibility_levels": "[]int", "max_attachment_size": "int",
	"session_expire_delay": "int", "default_project_visibility": "int", "default_snippet_visibility": "int",
	"default_group_visibility": "int", "restricted_signup_domains": "[]string", "user_oauth_applications": "bool",
	"after_sign_out_path": "string", "container_registry_token_expire_delay": "int", "max_artifacts_size": "int",
	"shared_runners_enabled": "bool", "repository_storage": "string",
}

func defaultSettings() *appSettings {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &appSettings{createdAt: now, updatedAt: now, values: map[string]any{
		"default_projects_limit": 10, "signup_enabled": true, "signin_enabled": true, "gravatar_enabled": true,
		"avatar_provider_enabled": true, "sign_in_text": nil, "after_sign_up_text": nil, "home_page_url": nil,
		"default_branch_protection": 1, "restricted_visibility_levels": nil, "max_attachment_size": 10,
		"session_expire_delay": 10080, "default_project_visibility": 0, "default_snippet_visibility": 0,
		"default_group_visibility": 0, "restricted_signup_domains": nil, "user_oauth_applications": true,
		"after_sign_out_path": nil, "container_registry_token_expire_delay": 5, "max_artifacts_size": 100,
		"shared_runners_enabled": true, "repository_storage": "default",
	}}
}

// intValue reads an integer setting, or 0.
func (a *appSettings) intValue(key string) int {
	if v, ok := a.values[key].(int); ok {
		return v
	}
	return 0
}

func (s *Server) settingsRoutes() {
	s.api("GET /application/settings", rule{admin: true}, s.getSettings)
	s.api("PUT /application/settings", rule{admin: true}, s.updateSettings)
}

func (s *Server) settingsJSON() map[string]any {
	m := map[string]any{"id": 1, "created_at": ts(s.settings.createdAt), "updated_at": ts(s.settings.updatedAt)}
	for k, v := range s.settings.values {
		m[k] = v
	}
	return m
}

func (s *Server) getSettings(c *call) error { return c.json(http.StatusOK, s.settingsJSON()) }

// updateSettings validates every sent value by its kind before storing any,
// answering 400 with the message-object shape on bad values.
func (s *Server) updateSettings(c *call) error {
	parsed := map[string]any{}
	bad := map[string]any{}
	for key := range c.form {
		name := strings.TrimSuffix(key, "[]")
		if name == "id" || name == "created_at" || name == "updated_at" {
			continue
		}
		v, ok := parseSetting(settingKinds[name], c.form[key])
		if !ok {
			bad[name] = []string{"is invalid"}
			continue
		}
		parsed[name] = v
	}
	if len(bad) > 0 {
		return errFields(bad)
	}
	for k, v := range parsed {
		s.settings.values[k] = v
	}
	s.settings.updatedAt = s.now()
	return c.json(http.StatusOK, s.settingsJSON())
}

func parseSetting(kind string, raw []string) (any, bool) {
	first := ""
	if len(raw) > 0 {
		first = strings.TrimSpace(raw[0])
	}
	switch kind {
	case "int":
		n, err := strconv.Atoi(first)
		return n, err == nil && n >= 0
	case "bool":
		switch strings.ToLower(first) {
		case "true", "1", "t", "on":
			return true, true
		case "false", "0", "f", "off":
			return false, true
		}
		return nil, false
	case "[]int":
		if levels, ok := parseLevels(raw); ok {
			return levels, true
		}
		return nil, false
	case "[]string":
		return parseDomains(raw), true
	}
	return first, true
}

// parseLevels reads a list of visibility levels (0, 10, 20) or protection
// levels (0, 1, 2); blanks are skipped, anything else is refused.
func parseLevels(raw []string) ([]int, bool) {
	out := []int{}
	for _, r := range raw {
		if r == "" {
			continue
		}
		n, err := strconv.Atoi(r)
		if err != nil || (n != 0 && n != 1 && n != 2 && n != 10 && n != 20) {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// parseDomains reads a list given as repeated values, comma-separated, or
// both.
func parseDomains(raw []string) []string {
	out := []string{}
	for _, r := range raw {
		for _, d := range strings.Split(r, ",") {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}
