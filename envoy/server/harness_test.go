package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// t0 is the start of a minute (and of every shorter window).
var t0 = time.UnixMilli(1_700_006_400_000)

// running is a server under test and a gRPC client of it.
type running struct {
	srv     *server.Server
	client  rlsv3.RateLimitServiceClient
	conn    *grpc.ClientConn
	addr    string
	httpURL string
	cfgPath string
	served  chan error
}

// quietLogger drops the server's logs.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// start writes yaml to a file and serves it with o (ConfigPath set here) on
// free ports; the server is shut down at the end of the test.
func start(t *testing.T, yaml string, o server.Options) *running {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(yaml), 0o600))
	if o.ConfigPath == "" {
		o.ConfigPath = path
	}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	srv, err := server.New(o)
	require.NoError(t, err, "the server must start on a valid configuration")
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r := &running{srv: srv, addr: gl.Addr().String(), httpURL: "http://" + hl.Addr().String(), cfgPath: o.ConfigPath, served: make(chan error, 1)}
	go func() { r.served <- srv.Serve(gl, hl) }()
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	r.conn = conn
	r.client = rlsv3.NewRateLimitServiceClient(conn)
	t.Cleanup(func() {
		conn.Close()
		require.NoError(t, srv.Shutdown(context.Background()))
		require.NoError(t, <-r.served, "Serve returns nil after Shutdown")
	})
	return r
}

// localOpts is a local backend on clk.
func localOpts(clk core.Clock) server.Options {
	return server.Options{Service: service.Options{Backend: service.NewLocal(clk, 0), Clock: clk, Headers: true}}
}

// desc builds a descriptor from key, value pairs.
func desc(kv ...string) *commonv3.RateLimitDescriptor {
	d := &commonv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &commonv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// ask sends one request.
func (r *running) ask(t *testing.T, domain string, hits uint32, ds ...*commonv3.RateLimitDescriptor) *rlsv3.RateLimitResponse {
	t.Helper()
	resp, err := r.client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: domain, Descriptors: ds, HitsAddend: hits})
	require.NoError(t, err, "ShouldRateLimit(%s, %v)", domain, ds)
	require.Len(t, resp.Statuses, len(ds), "one status per descriptor")
	return resp
}

// admitted counts OK answers to n single-hit requests of one descriptor.
func (r *running) admitted(t *testing.T, n int, domain string, d *commonv3.RateLimitDescriptor) int {
	t.Helper()
	got := 0
	for range n {
		if r.ask(t, domain, 0, d).OverallCode == rlsv3.RateLimitResponse_OK {
			got++
		}
	}
	return got
}

func headers(resp *rlsv3.RateLimitResponse) map[string]string {
	h := map[string]string{}
	for _, hv := range resp.ResponseHeadersToAdd {
		h[hv.Key] = hv.Value
	}
	return h
}
