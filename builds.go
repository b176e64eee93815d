package collab

// BuildsService handles the build endpoints of the consumer API.
type BuildsService struct{ client *Client }

// Build is a CI build record.
type Build struct {
	ID            int            `json:"id"`
	Name          string         `json:"name"`
	Stage         string         `json:"stage"`
	Ref           string         `json:"ref"`
	Tag           bool           `json:"tag"`
	Status        string         `json:"status"`
	Coverage      *float64       `json:"coverage"`
	CreatedAt     *Time          `json:"created_at"`
	StartedAt     *Time          `json:"started_at"`
	FinishedAt    *Time          `json:"finished_at"`
	Runner        *BuildRunner   `json:"runner"`
	ArtifactsFile *ArtifactsFile `json:"artifacts_file"`
	DownloadURL   *string        `json:"download_url,omitempty"`
	Commit        *BuildCommit   `json:"commit"`
	User          *BuildUser     `json:"user"`
}

// BuildRunner is the runner that took a build.
type BuildRunner struct {
	ID          int    `json:"id"`
	Description string `json:"description"`
	Active      bool   `json:"active"`
	IsShared    bool   `json:"is_shared"`
	Name        string `json:"name"`
}

// ArtifactsFile describes a build's stored artifacts.
type ArtifactsFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

// BuildCommit is the commit a build ran on.
type BuildCommit struct {
	ID          string `json:"id"`
	ShortID     string `json:"short_id"`
	Title       string `json:"title"`
	Message     string `json:"message"`
	AuthorName  string `json:"author_name"`
	AuthorEmail string `json:"author_email"`
	CreatedAt   *Time  `json:"created_at"`
}
