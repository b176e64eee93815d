package collabtest

// appSettings holds the application settings by their JSON names, so that
// fields the contract does not list survive a PUT.
type appSettings struct {
	values map[string]any
}

func defaultSettings() *appSettings {
	return &appSettings{values: map[string]any{
		"default_projects_limit":     10,
		"signup_enabled":             true,
		"signin_enabled":             true,
		"default_branch_protection":  1,
		"max_attachment_size":        10,
		"default_project_visibility": 0,
		"default_snippet_visibility": 0,
	}}
}

// intValue reads an integer setting, or 0.
func (a *appSettings) intValue(key string) int {
	switch v := a.values[key].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

func (s *Server) settingsRoutes() {}
