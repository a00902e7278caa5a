package middleware

// FailMode says what happens to a request when a limiter fails or the
// decision runs past the timeout. The zero value is FailOpen.
type FailMode uint8

const (
	// FailOpen serves the request as if it had been allowed.
	FailOpen FailMode = iota
	// FailClosed answers 503 Service Unavailable.
	FailClosed
)

// String returns "fail-open" or "fail-closed".
func (m FailMode) String() string {
	if m == FailClosed {
		return "fail-closed"
	}
	return "fail-open"
}
