// Package otelcollab reports a collab client's API calls and a webhook
// receiver's deliveries as OpenTelemetry traces and metrics. It uses the
// OpenTelemetry API only: the program picks the SDK and the exporter, and
// without them (no provider set) the observer costs next to nothing.
//
//	obs, err := otelcollab.New() // the global providers, or WithTracerProvider, WithMeterProvider
//	client, err := collab.NewClient(url, collab.WithPrivateToken(tok), collab.WithObserver(obs))
//	h, err := webhook.NewHandler(webhook.Options{Queue: q, Observer: obs, ...})
//	unregister, err := obs.ObserveQueue(q.Stats) // the queue's gauges
//
// Client calls. Each call is one span of kind client, named by its route
// template ("GET /projects/:id/issues"), never by its path, so that ids and
// names do not make span names unbounded. Its attributes are the method
// (http.request.method), the template (url.template), the server
// (server.address, server.port), the last status (http.response.status_code)
// and the requests sent (collab.attempts); each retry and each wait for a
// limit is a span event. A failed call has error status and error.type. No
// token, query value, body or error message is ever recorded.
//
// Client metrics, after the OpenTelemetry HTTP client conventions:
//   - http.client.request.duration (s): by method, template, server (address
//     and port) and status class (http.response.status_class: "2xx" … "5xx", or "none" when no
//     answer came), and error.type when the call failed;
//   - collab.client.retries: retries, by method, template and the status class
//     that caused them;
//   - collab.client.limit_wait (s): time spent waiting for the rate or
//     concurrency limit or a pause the server asked for, by method and template.
//
// Receiver. Each delivery that reaches the handler is a span of kind server
// ("webhook receive") that ends once admission is decided; its trace context
// is stored with an accepted delivery. Each handling is a span of kind
// consumer ("webhook handle"), a new trace linked to the admitting span;
// the callback's context carries it, so the API calls made with that context
// are its children. A delivery synthesized by catch-up says so
// (collab.webhook.synthesized).
//
// Receiver metrics, by kind (collab.webhook.kind):
//   - collab.webhook.received, and collab.webhook.admitted by outcome
//     (accepted, duplicate, ignored, rejected, asked_again, refused);
//   - collab.webhook.handling.duration (s) by outcome (done, retry,
//     dead_letter); collab.webhook.handling.attempts, the attempts a delivery
//     took when it left the queue; collab.webhook.dead_letters;
//   - collab.webhook.catchup.runs (by collab.webhook.catchup.result: ok or
//     error), collab.webhook.catchup.changes and collab.webhook.catchup.lag
//     (s), by project;
//   - with ObserveQueue, the observable gauges collab.webhook.queue.depth,
//     collab.webhook.queue.oldest_age (s) and collab.webhook.queue.dead_letters.
package otelcollab
