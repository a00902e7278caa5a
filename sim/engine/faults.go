package engine

import (
	"errors"
	"time"
)

// callTimeout is how long a PoP waits for a reply the network lost (a
// partition) before the call fails: the order of a go-redis read timeout.
const callTimeout = time.Second

// gossipWait bounds how long a published gossip payload may take to reach
// every PoP through NATS before the run fails (a hang only).
const gossipWait = 10 * time.Second

// Errors the honest network hands a PoP's failed calls.
var (
	errRefused = errors.New("simulated: redis refused the connection (outage)")
	errLost    = errors.New("simulated: no reply within the call timeout (partition)")
)
