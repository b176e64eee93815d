package collabtest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// appSettings holds the application settings by their JSON names, so that
// fields this fake does not know survive a PUT.
type appSettings struct {
	values    map[string]any
	createdAt time.Time
	updatedAt time.Time
}

// settingKinds types every setting collab.ApplicationSettings names, by its
// JSON name; unknown ones are stored as strings.
var settingKinds = func() map[string]string {
	kinds := map[string]string{}
	t := reflect.TypeFor[collab.ApplicationSettings]()
	for i := range t.NumField() {
		if name, ok := settingName(t.Field(i)); ok {
			kinds[name] = settingKind(t.Field(i).Type)
		}
	}
	return kinds
}()

// settingName is the JSON name of a settings field, false for the id, the
// times and Extra, which a PUT does not set.
func settingName(f reflect.StructField) (string, bool) {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name, name != "-" && name != "id" && !strings.HasSuffix(name, "_at")
}

// settingKind is how parseSetting reads a field of type t.
func settingKind(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Slice:
		return "[]" + t.Elem().Kind().String()
	case t.Kind() == reflect.Bool || t.Kind() == reflect.Int:
		return t.Kind().String()
	}
	return "string"
}

func defaultSettings() *appSettings {
	now := time.Now().UTC().Truncate(time.Millisecond)
	return &appSettings{createdAt: now, updatedAt: now, values: settingValues(collab.ApplicationSettings{
		DefaultProjectsLimit: 10, SignupEnabled: true, SigninEnabled: true, GravatarEnabled: true,
		AvatarProviderEnabled: true, DefaultBranchProtection: 1, MaxAttachmentSize: 10, SessionExpireDelay: 10080,
		UserOAuthApplications: true, ContainerRegistryTokenExpireDelay: 5, MaxArtifactsSize: 100,
		SharedRunnersEnabled: true, RepositoryStorage: "default",
	})}
}

// settingValues are rec's settings by their JSON names, as parseSetting
// stores them: nil for a nil text or list.
func settingValues(rec collab.ApplicationSettings) map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(rec)
	for i := range v.NumField() {
		name, ok := settingName(v.Type().Field(i))
		if !ok {
			continue
		}
		f := v.Field(i)
		switch {
		case (f.Kind() == reflect.Pointer || f.Kind() == reflect.Slice) && f.IsNil():
			out[name] = nil
		default:
			out[name] = reflect.Indirect(f).Interface()
		}
	}
	return out
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

// settingsJSON is the settings as a record, with the unknown ones in its
// Extra.
func (s *Server) settingsJSON() (any, error) {
	b, err := json.Marshal(s.settings.values)
	if err != nil {
		return nil, err
	}
	rec := &collab.ApplicationSettings{}
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, err
	}
	rec.ID, rec.CreatedAt, rec.UpdatedAt = 1, apiTime(s.settings.createdAt), apiTime(s.settings.updatedAt)
	return reply(rec), nil
}

func (s *Server) getSettings(c *call) error {
	rec, err := s.settingsJSON()
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, rec)
}

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
	return s.getSettings(c)
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
