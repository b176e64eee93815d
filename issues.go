package collab

// IssuesService handles the issue endpoints of the contract.
type IssuesService struct{ client *Client }

// Issue is an issue record.
type Issue struct {
	ID             int        `json:"id"`
	IID            int        `json:"iid"`
	ProjectID      int        `json:"project_id"`
	Title          string     `json:"title"`
	Description    string     `json:"description"`
	State          string     `json:"state"`
	CreatedAt      *Time      `json:"created_at"`
	UpdatedAt      *Time      `json:"updated_at"`
	Labels         []string   `json:"labels"`
	Milestone      *Milestone `json:"milestone"`
	Assignee       *User      `json:"assignee"`
	Author         *User      `json:"author"`
	Subscribed     bool       `json:"subscribed"`
	UserNotesCount int        `json:"user_notes_count"`
	Upvotes        int        `json:"upvotes"`
	Downvotes      int        `json:"downvotes"`
	DueDate        *Time      `json:"due_date"`
}
