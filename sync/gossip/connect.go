package gossip

import (
	"time"

	"github.com/nats-io/nats.go"
)

// The connection settings ConnectOptions gives (see its doc).
const (
	reconnectWait    = 250 * time.Millisecond
	reconnectJitter  = 100 * time.Millisecond
	reconnectBufSize = 8 << 20
	pingInterval     = 5 * time.Second
	maxPingsOut      = 2
	writeTimeout     = 5 * time.Second
)

// ConnectOptions are the nats.go options a PoP's gossip connection needs:
//   - reconnect forever (nats.go gives up after 60 attempts by default, and
//     a connection that gave up never gossips again);
//   - retry a first connect that failed instead of failing, so a PoP starts
//     and serves while NATS is down and gossips once it is up;
//   - buffer publishes while disconnected, up to 8 MiB; a publish that does
//     not fit fails at once (Transport.Publish returns a
//     *core.UnavailableError) instead of blocking;
//   - try again every 250 ms plus up to 100 ms at random, so many PoPs do
//     not all come back at once (nats.go's default, 2 s, is two more
//     seconds of stale views after every NATS restart);
//   - ping every 5 s and drop the connection after 2 unanswered pings, so
//     a server that vanished without closing TCP is noticed in about 10 s
//     (nats.go's default: 2 min × 2);
//   - drop the connection when a write to the server does not complete
//     within 5 s (nats.go's FlusherTimeout; its default, 1 min): once a
//     server that stopped reading, or a path that went silent, has filled
//     the socket's buffers, a Publish writes under the connection's lock,
//     and it, every other Publish and Unsubscribe (a budget Limiter's
//     publisher, and with it that Limiter's gossip) waited that long;
//     dropped, the connection reconnects and buffers as above.
//
// Credentials and TLS are not here: append nats.UserInfo, nats.Token,
// nats.Nkey, nats.Secure, nats.RootCAs or nats.ClientCert, or a
// nats.Name for monitoring; an option given later overrides one given
// earlier.
func ConnectOptions() []nats.Option {
	return []nats.Option{
		nats.MaxReconnects(-1),
		nats.RetryOnFailedConnect(true),
		nats.ReconnectWait(reconnectWait),
		nats.ReconnectJitter(reconnectJitter, reconnectJitter),
		nats.ReconnectBufSize(reconnectBufSize),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.FlusherTimeout(writeTimeout),
	}
}

// Connect dials url (one server, or a comma-separated list of a cluster's
// servers) with ConnectOptions followed by extra, and returns the
// connection to give budget.Limiter.UseNATS. Because a failed first connect is
// retried in the background, an unreachable or wrong address is not an
// error here: the connection is returned reconnecting, publishes are
// buffered, and nc.Status() or a nats.ConnectHandler /
// nats.ReconnectErrHandler in extra tell when it is up. Errors are the
// ones nats.Connect returns at once: a malformed URL or option. Close the
// connection after the limiter's Close.
func Connect(url string, extra ...nats.Option) (*nats.Conn, error) {
	return nats.Connect(url, append(ConnectOptions(), extra...)...)
}
