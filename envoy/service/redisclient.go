package service

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// RedisClientOptions describe the Redis to reach: one node, a Sentinel
// set (MasterName) or a Cluster (Cluster, or several Addrs without
// MasterName), optionally over TLS. The zero value is invalid: Addrs is
// required.
type RedisClientOptions struct {
	Addrs      []string
	MasterName string // Sentinel: the master's name; Addrs are the sentinels
	Cluster    bool   // a Cluster even with one address (a configuration endpoint)
	Username   string
	Password   string
	DB         int
	// Timeout bounds every call (dial, read, write); the client honours
	// contexts' deadlines too. 0 = 100 ms.
	Timeout  time.Duration
	PoolSize int // 0 = go-redis' default (10 per CPU)
	TLS      bool
	CAFile   string // PEM roots for TLS; "" = the system's
	CertFile string // client certificate for TLS (with KeyFile)
	KeyFile  string
}

// NewRedisClient builds the client: ContextTimeoutEnabled, DialTimeout,
// ReadTimeout and WriteTimeout all Timeout, one dial retry, so a Redis that
// does not answer costs a bounded wait. Errors: no address, or an unreadable
// CA or key pair (matching core.ErrInvalid for the former).
func NewRedisClient(o RedisClientOptions) (goredis.UniversalClient, error) {
	if len(o.Addrs) == 0 {
		return nil, fmt.Errorf("%w: no Redis address", core.ErrInvalid)
	}
	if o.Timeout <= 0 {
		o.Timeout = 100 * time.Millisecond
	}
	uo := &goredis.UniversalOptions{
		Addrs: o.Addrs, MasterName: o.MasterName, IsClusterMode: o.Cluster,
		Username: o.Username, Password: o.Password, DB: o.DB,
		DialTimeout: o.Timeout, ReadTimeout: o.Timeout, WriteTimeout: o.Timeout,
		ContextTimeoutEnabled: true, DialerRetries: 1, PoolSize: o.PoolSize,
	}
	if o.TLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("redis CA: %w", err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: redis CA %s holds no PEM certificate", core.ErrInvalid, o.CAFile)
			}
		}
		if o.CertFile != "" || o.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("redis client certificate: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		uo.TLSConfig = tc
	}
	return goredis.NewUniversalClient(uo), nil
}
