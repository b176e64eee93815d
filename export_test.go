package collab

import "testing"

// What the external tests (package collab_test, which can import the fake
// server) need from the package and from its internal tests.
var (
	NewMockClient     = newMockClient
	Watched           = watched
	TestLogger        = testLogger
	FastRetry         = fastRetry
	ErrUploadRejected = errUploadRejected
)

const (
	TestToken     = testToken
	MaxLabelReads = maxLabelReads
)

// Mock is the recording transport of NewMockClient.
type Mock = mock

// RoundTripper checks one response body of a record type.
type RoundTripper = roundTripper

// RecordRoundTrip is recordRoundTrip for T.
func RecordRoundTrip[T any](t *testing.T, body []byte) { recordRoundTrip[T](t, body) }
