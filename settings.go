package collab

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
)

// SettingsService handles the application settings endpoints. Administrators only.
type SettingsService struct{ client *Client }

// ApplicationSettings is the instance-wide settings record. Extra keeps every
// field the struct does not name, so a record never loses one.
type ApplicationSettings struct {
	ID                                int      `json:"id"`
	CreatedAt                         *Time    `json:"created_at"`
	UpdatedAt                         *Time    `json:"updated_at"`
	DefaultProjectsLimit              int      `json:"default_projects_limit"`
	SignupEnabled                     bool     `json:"signup_enabled"`
	SigninEnabled                     bool     `json:"signin_enabled"`
	GravatarEnabled                   bool     `json:"gravatar_enabled"`
	AvatarProviderEnabled             bool     `json:"avatar_provider_enabled"`
	SignInText                        *string  `json:"sign_in_text"`
	AfterSignUpText                   *string  `json:"after_sign_up_text"`
	HomePageURL                       *string  `json:"home_page_url"`
	DefaultBranchProtection           int      `json:"default_branch_protection"`
	RestrictedVisibilityLevels        []int    `json:"restricted_visibility_levels"`
	MaxAttachmentSize                 int      `json:"max_attachment_size"`
	SessionExpireDelay                int      `json:"session_expire_delay"`
	DefaultProjectVisibility          int      `json:"default_project_visibility"`
	DefaultSnippetVisibility          int      `json:"default_snippet_visibility"`
	DefaultGroupVisibility            int      `json:"default_group_visibility"`
	RestrictedSignupDomains           []string `json:"restricted_signup_domains"`
	UserOAuthApplications             bool     `json:"user_oauth_applications"`
	AfterSignOutPath                  *string  `json:"after_sign_out_path"`
	ContainerRegistryTokenExpireDelay int      `json:"container_registry_token_expire_delay"`
	MaxArtifactsSize                  int      `json:"max_artifacts_size"`
	SharedRunnersEnabled              bool     `json:"shared_runners_enabled"`
	RepositoryStorage                 string   `json:"repository_storage"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// UpdateSettingsOptions are the parameters of Update; nil fields are unchanged.
// Arrays are sent in the Rails form the server reads (name[]=a&name[]=b);
// an empty, non-nil array clears the restriction.
type UpdateSettingsOptions struct {
	DefaultProjectsLimit              *int      `url:"default_projects_limit,omitempty"`
	SignupEnabled                     *bool     `url:"signup_enabled,omitempty"`
	SigninEnabled                     *bool     `url:"signin_enabled,omitempty"`
	GravatarEnabled                   *bool     `url:"gravatar_enabled,omitempty"`
	AvatarProviderEnabled             *bool     `url:"avatar_provider_enabled,omitempty"`
	SignInText                        *string   `url:"sign_in_text,omitempty"`
	AfterSignUpText                   *string   `url:"after_sign_up_text,omitempty"`
	HomePageURL                       *string   `url:"home_page_url,omitempty"`
	DefaultBranchProtection           *int      `url:"default_branch_protection,omitempty"`
	RestrictedVisibilityLevels        *[]int    `url:"-"`
	MaxAttachmentSize                 *int      `url:"max_attachment_size,omitempty"`
	SessionExpireDelay                *int      `url:"session_expire_delay,omitempty"`
	DefaultProjectVisibility          *int      `url:"default_project_visibility,omitempty"`
	DefaultSnippetVisibility          *int      `url:"default_snippet_visibility,omitempty"`
	DefaultGroupVisibility            *int      `url:"default_group_visibility,omitempty"`
	RestrictedSignupDomains           *[]string `url:"-"`
	UserOAuthApplications             *bool     `url:"user_oauth_applications,omitempty"`
	AfterSignOutPath                  *string   `url:"after_sign_out_path,omitempty"`
	ContainerRegistryTokenExpireDelay *int      `url:"container_registry_token_expire_delay,omitempty"`
	MaxArtifactsSize                  *int      `url:"max_artifacts_size,omitempty"`
	SharedRunnersEnabled              *bool     `url:"shared_runners_enabled,omitempty"`
	RepositoryStorage                 *string   `url:"repository_storage,omitempty"`

	// Extra sends settings this struct does not name yet, by their names.
	Extra map[string]string `url:"-"`
}

// EncodeValues adds the arrays and Extra to the form go-querystring builds
// from the tagged fields.
func (o UpdateSettingsOptions) EncodeValues(_ string, v *url.Values) error {
	type tagged UpdateSettingsOptions
	if err := encodeInto(v, tagged(o)); err != nil {
		return err
	}
	if o.RestrictedVisibilityLevels != nil {
		levels := make([]string, len(*o.RestrictedVisibilityLevels))
		for i, l := range *o.RestrictedVisibilityLevels {
			levels[i] = strconv.Itoa(l)
		}
		addArray(v, "restricted_visibility_levels", levels)
	}
	if o.RestrictedSignupDomains != nil {
		addArray(v, "restricted_signup_domains", *o.RestrictedSignupDomains)
	}
	for k, val := range o.Extra {
		if !v.Has(k) {
			v.Set(k, val)
		}
	}
	return nil
}

// addArray writes name[]=a&name[]=b, or name= to send an empty array.
func addArray(v *url.Values, name string, items []string) {
	if len(items) == 0 {
		v.Set(name, "")
		return
	}
	for _, it := range items {
		v.Add(name+"[]", it)
	}
}

// Get returns the settings.
//
// API: GET /application/settings
func (s *SettingsService) Get(ctx context.Context) (*ApplicationSettings, *Response, error) {
	return do[ApplicationSettings](ctx, s.client, http.MethodGet, route("application/settings"), nil)
}

// Update changes the settings.
//
// API: PUT /application/settings
func (s *SettingsService) Update(ctx context.Context, opt *UpdateSettingsOptions) (*ApplicationSettings, *Response, error) {
	return do[ApplicationSettings](ctx, s.client, http.MethodPut, route("application/settings"), settingsForm{opt})
}

// settingsForm lets go-querystring call UpdateSettingsOptions.EncodeValues:
// it only consults an Encoder on struct fields, not on the top value.
type settingsForm struct {
	Opt *UpdateSettingsOptions `url:"opt,omitempty"`
}
