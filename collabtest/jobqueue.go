package collabtest

import (
	"net/http"

	"github.com/collabsvc/collab"
)

// jobQueueRoutes serves the metrics under both names of the first segment,
// "jobqueue" and "sidekiq" (the name deployed servers use). Each answers
// with its part of the compound record.
func (s *Server) jobQueueRoutes() {
	for _, seg := range []string{"jobqueue", "sidekiq"} {
		s.api("GET /"+seg+"/queue_metrics", rule{admin: true}, s.jobMetrics(func(m *collab.CompoundMetrics) any {
			return &collab.QueueMetrics{Queues: m.Queues}
		}))
		s.api("GET /"+seg+"/process_metrics", rule{admin: true}, s.jobMetrics(func(m *collab.CompoundMetrics) any {
			return &collab.ProcessMetrics{Processes: m.Processes}
		}))
		s.api("GET /"+seg+"/job_stats", rule{admin: true}, s.jobMetrics(func(m *collab.CompoundMetrics) any {
			return &collab.JobStats{Jobs: m.Jobs}
		}))
		s.api("GET /"+seg+"/compound_metrics", rule{admin: true}, s.jobMetrics(func(m *collab.CompoundMetrics) any { return m }))
	}
}

// jobMetrics answers with part of the metrics record.
func (s *Server) jobMetrics(part func(*collab.CompoundMetrics) any) handler {
	return func(c *call) error { return c.json(http.StatusOK, reply(part(s.jobMetricsRecord()))) }
}

// jobMetricsRecord is plausible figures derived from the fake's builds.
func (s *Server) jobMetricsRecord() *collab.CompoundMetrics {
	pending, done, failed := 0, 0, 0
	for _, b := range s.builds {
		switch b.status {
		case "pending":
			pending++
		case "failed":
			failed++
			done++
		case "success", "canceled":
			done++
		}
	}
	return &collab.CompoundMetrics{
		Queues: map[string]*collab.QueueMetric{
			"default":  {Backlog: pending},
			"mailers":  {Latency: 0.25},
			"pipeline": {Backlog: pending, Latency: float64(pending) * 1.5},
		},
		Processes: []*collab.JobProcess{{
			Hostname: "collabtest", PID: 4242, Tag: "collab", StartedAt: apiTime(s.settings.createdAt),
			Queues: []string{"default", "mailers", "pipeline"}, Labels: []string{}, Concurrency: 25, Busy: min(pending, 25),
		}},
		Jobs: &collab.JobCounts{Processed: done, Failed: failed, Enqueued: pending},
	}
}
