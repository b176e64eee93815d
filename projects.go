package collab

// ProjectsService handles the project endpoints of the contract.
type ProjectsService struct{ client *Client }

// Project is a project record. Group-embedded projects leave some fields out.
type Project struct {
	ID                       int                `json:"id"`
	Name                     string             `json:"name"`
	Path                     string             `json:"path"`
	NameWithNamespace        string             `json:"name_with_namespace"`
	PathWithNamespace        string             `json:"path_with_namespace"`
	Description              string             `json:"description"`
	DefaultBranch            string             `json:"default_branch"`
	Public                   bool               `json:"public"`
	VisibilityLevel          VisibilityLevel    `json:"visibility_level"`
	SSHURLToRepo             string             `json:"ssh_url_to_repo"`
	HTTPURLToRepo            string             `json:"http_url_to_repo"`
	WebURL                   string             `json:"web_url"`
	TagList                  []string           `json:"tag_list"`
	Owner                    *ProjectOwner      `json:"owner"`
	IssuesEnabled            bool               `json:"issues_enabled"`
	MergeRequestsEnabled     bool               `json:"merge_requests_enabled"`
	BuildsEnabled            bool               `json:"builds_enabled"`
	WikiEnabled              bool               `json:"wiki_enabled"`
	SnippetsEnabled          bool               `json:"snippets_enabled"`
	ContainerRegistryEnabled bool               `json:"container_registry_enabled"`
	PublicBuilds             bool               `json:"public_builds"`
	SharedRunnersEnabled     bool               `json:"shared_runners_enabled"`
	Archived                 bool               `json:"archived"`
	OpenIssuesCount          int                `json:"open_issues_count"`
	ForksCount               int                `json:"forks_count"`
	StarCount                int                `json:"star_count"`
	CreatorID                int                `json:"creator_id"`
	CreatedAt                *Time              `json:"created_at"`
	LastActivityAt           *Time              `json:"last_activity_at"`
	Namespace                *ProjectNamespace  `json:"namespace"`
	Permissions              *Permissions       `json:"permissions"`
	AvatarURL                string             `json:"avatar_url"`
	RunnersToken             string             `json:"runners_token,omitempty"`
	ForkedFromProject        *ForkedFromProject `json:"forked_from_project,omitempty"`
	SharedWithGroups         []*SharedGroup     `json:"shared_with_groups,omitempty"`
}

// ProjectOwner is the owner embedded in a project. Group projects have none.
type ProjectOwner struct {
	ID        int    `json:"id"`
	Name      string `json:"name"`
	CreatedAt *Time  `json:"created_at"`
}

// ProjectNamespace is the namespace embedded in a project. Group-embedded
// projects add Avatar, ShareWithGroupLock and VisibilityLevel.
type ProjectNamespace struct {
	ID                 int              `json:"id"`
	Name               string           `json:"name"`
	Path               string           `json:"path"`
	Description        string           `json:"description"`
	OwnerID            int              `json:"owner_id"`
	CreatedAt          *Time            `json:"created_at"`
	UpdatedAt          *Time            `json:"updated_at"`
	Avatar             *NamespaceAvatar `json:"avatar,omitempty"`
	ShareWithGroupLock bool             `json:"share_with_group_lock,omitempty"`
	VisibilityLevel    VisibilityLevel  `json:"visibility_level,omitempty"`
}

// NamespaceAvatar is a group namespace's avatar.
type NamespaceAvatar struct {
	URL string `json:"url"`
}

// Permissions is the caller's access to a project, directly and through its group.
type Permissions struct {
	ProjectAccess *AccessInfo `json:"project_access"`
	GroupAccess   *AccessInfo `json:"group_access"`
}

// AccessInfo is one access grant in Permissions.
type AccessInfo struct {
	AccessLevel       AccessLevel `json:"access_level"`
	NotificationLevel int         `json:"notification_level"`
}

// ForkedFromProject is the brief source project of a fork.
type ForkedFromProject struct {
	ID                int    `json:"id"`
	Name              string `json:"name"`
	NameWithNamespace string `json:"name_with_namespace"`
	Path              string `json:"path"`
	PathWithNamespace string `json:"path_with_namespace"`
}

// SharedGroup is a group a project is shared with.
type SharedGroup struct {
	GroupID          int         `json:"group_id"`
	GroupName        string      `json:"group_name"`
	GroupAccessLevel AccessLevel `json:"group_access_level"`
}
