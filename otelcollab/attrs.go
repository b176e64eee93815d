package otelcollab

import "go.opentelemetry.io/otel/attribute"

// The attributes of spans and metrics: those of calls are the OpenTelemetry
// HTTP conventions' names, the others this package's own.
const (
	attrMethod      = attribute.Key("http.request.method")
	attrTemplate    = attribute.Key("url.template")
	attrServer      = attribute.Key("server.address")
	attrPort        = attribute.Key("server.port")
	attrStatus      = attribute.Key("http.response.status_code")
	attrStatusClass = attribute.Key("http.response.status_class")
	attrErrorType   = attribute.Key("error.type")
	attrAttempts    = attribute.Key("collab.attempts")
	attrAttempt     = attribute.Key("collab.attempt")
	attrWait        = attribute.Key("collab.wait_seconds")
	attrKind        = attribute.Key("collab.webhook.kind")
	attrOutcome     = attribute.Key("collab.webhook.outcome")
	attrDeliveryID  = attribute.Key("collab.webhook.delivery_id")
	attrSynthesized = attribute.Key("collab.webhook.synthesized")
	attrProject     = attribute.Key("collab.webhook.project")
	attrResult      = attribute.Key("collab.webhook.catchup.result")
)
