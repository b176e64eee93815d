package collab

import (
	"context"
	"encoding/json"
	"net/http"
)

// JobQueueService handles the background-job metrics endpoints. The first
// path segment is the client's job-queue segment (WithJobQueuePath).
// Administrators only.
type JobQueueService struct{ client *Client }

// QueueMetrics is the answer of QueueMetrics: queue name to its figures.
type QueueMetrics struct {
	Queues map[string]*QueueMetric `json:"queues"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// QueueMetric is one queue's backlog and latency (seconds).
type QueueMetric struct {
	Backlog int     `json:"backlog"`
	Latency float64 `json:"latency"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ProcessMetrics is the answer of ProcessMetrics.
type ProcessMetrics struct {
	Processes []*JobProcess `json:"processes"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// JobProcess is one worker process.
type JobProcess struct {
	Hostname    string   `json:"hostname"`
	PID         int      `json:"pid"`
	Tag         string   `json:"tag"`
	StartedAt   *Time    `json:"started_at"`
	Queues      []string `json:"queues"`
	Labels      []string `json:"labels"`
	Concurrency int      `json:"concurrency"`
	Busy        int      `json:"busy"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// JobStats is the answer of JobStats.
type JobStats struct {
	Jobs *JobCounts `json:"jobs"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// JobCounts are the job totals.
type JobCounts struct {
	Processed int `json:"processed"`
	Failed    int `json:"failed"`
	Enqueued  int `json:"enqueued"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// CompoundMetrics is the answer of CompoundMetrics: all three at once.
type CompoundMetrics struct {
	Queues    map[string]*QueueMetric `json:"queues"`
	Processes []*JobProcess           `json:"processes"`
	Jobs      *JobCounts              `json:"jobs"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// QueueMetrics returns each queue's backlog and latency.
//
// API: GET /jobqueue/queue_metrics
func (s *JobQueueService) QueueMetrics(ctx context.Context) (*QueueMetrics, *Response, error) {
	return do[QueueMetrics](ctx, s.client, http.MethodGet, s.path("queue_metrics"), nil)
}

// ProcessMetrics returns the worker processes.
//
// API: GET /jobqueue/process_metrics
func (s *JobQueueService) ProcessMetrics(ctx context.Context) (*ProcessMetrics, *Response, error) {
	return do[ProcessMetrics](ctx, s.client, http.MethodGet, s.path("process_metrics"), nil)
}

// JobStats returns the job totals.
//
// API: GET /jobqueue/job_stats
func (s *JobQueueService) JobStats(ctx context.Context) (*JobStats, *Response, error) {
	return do[JobStats](ctx, s.client, http.MethodGet, s.path("job_stats"), nil)
}

// CompoundMetrics returns queues, processes and job totals together.
//
// API: GET /jobqueue/compound_metrics
func (s *JobQueueService) CompoundMetrics(ctx context.Context) (*CompoundMetrics, *Response, error) {
	return do[CompoundMetrics](ctx, s.client, http.MethodGet, s.path("compound_metrics"), nil)
}

func (s *JobQueueService) path(endpoint string) endpoint {
	return route("%s/"+endpoint, s.client.jobQueue)
}
