package ops

// Omitted names the SDK methods that no operation calls, each with the
// reason. A method reached as a sibling is not listed: an operation that
// calls the All iterator of a list reaches its one-page List method's
// endpoint, and one that opens a download (OpenTrace) reaches the endpoint
// of the method that writes it (Trace).
var Omitted = map[string]string{
	"Issues.Create":        "creates go through Issues.CreateOnce, so that a retried script does not open a second issue",
	"MergeRequests.Create": "creates go through MergeRequests.CreateOnce, so that a retried script does not open a second merge request",
	"Issues.Get":           "issues are addressed by the number people see: Issues.GetByIID",
	"MergeRequests.Get":    "merge requests are addressed by the number people see: MergeRequests.GetByIID",
}
