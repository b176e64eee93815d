package collabtest

import "net/http"

// jobQueueRoutes serves the metrics under both names of the first segment,
// "jobqueue" and "sidekiq" (the name deployed servers use).
func (s *Server) jobQueueRoutes() {
	for _, seg := range []string{"jobqueue", "sidekiq"} {
		s.api("GET /"+seg+"/queue_metrics", rule{admin: true}, s.jobMetrics("queues"))
		s.api("GET /"+seg+"/process_metrics", rule{admin: true}, s.jobMetrics("processes"))
		s.api("GET /"+seg+"/job_stats", rule{admin: true}, s.jobMetrics("jobs"))
		s.api("GET /"+seg+"/compound_metrics", rule{admin: true}, s.jobMetrics("queues", "processes", "jobs"))
	}
}

// jobMetrics answers plausible figures derived from the fake's builds.
func (s *Server) jobMetrics(parts ...string) handler {
	return func(c *call) error {
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
		all := map[string]any{
			"queues": map[string]any{
				"default":  map[string]any{"backlog": pending, "latency": 0},
				"mailers":  map[string]any{"backlog": 0, "latency": 0.25},
				"pipeline": map[string]any{"backlog": pending, "latency": float64(pending) * 1.5},
			},
			"processes": []any{map[string]any{
				"hostname": "collabtest", "pid": 4242, "tag": "collab", "started_at": ts(s.settings.createdAt),
				"queues": []string{"default", "mailers", "pipeline"}, "labels": []string{}, "concurrency": 25, "busy": min(pending, 25),
			}},
			"jobs": map[string]any{"processed": done, "failed": failed, "enqueued": pending},
		}
		out := map[string]any{}
		for _, p := range parts {
			out[p] = all[p]
		}
		return c.json(http.StatusOK, out)
	}
}
