package peers

import (
	"context"
	"fmt"
	"io"
	"time"

	gubernator "github.com/gubernator-io/gubernator/v2"
	"github.com/gubernator-io/gubernator/v2/cluster"
	"github.com/sirupsen/logrus"
)

// Weighted decides on n units of key arriving at PoP pop.
type Weighted func(ctx context.Context, pop int, key string, n int64) (bool, error)

// GubernatorCluster starts gubernator's own in-process test cluster of
// peers daemons on free loopback ports (package cluster: GlobalSyncWait
// 50 ms) and returns a Weighted that sends the requests of PoP p to daemon
// p, with the given behaviour (gubernator.Behavior_GLOBAL: answered from
// the local cache, hits sent to the owner asynchronously) and a token
// bucket of max per window. stop shuts the cluster down.
func GubernatorCluster(peers int, max int64, window time.Duration, behavior gubernator.Behavior) (w Weighted, stop func(), err error) {
	logrus.SetOutput(io.Discard)
	var infos []gubernator.PeerInfo
	for range peers {
		infos = append(infos, gubernator.PeerInfo{GRPCAddress: "127.0.0.1:0", HTTPAddress: "127.0.0.1:0"})
	}
	if err := cluster.StartWith(infos); err != nil {
		return nil, nil, fmt.Errorf("gubernator cluster: %w", err)
	}
	clients := make([]gubernator.V1Client, peers)
	for i := range clients {
		if clients[i], err = cluster.DaemonAt(i).Client(); err != nil {
			cluster.Stop()
			return nil, nil, err
		}
	}
	w = func(ctx context.Context, pop int, key string, n int64) (bool, error) {
		resp, err := clients[pop].GetRateLimits(ctx, &gubernator.GetRateLimitsReq{Requests: []*gubernator.RateLimitReq{{
			Name: "bench", UniqueKey: key, Hits: n, Limit: max, Duration: window.Milliseconds(),
			Algorithm: gubernator.Algorithm_TOKEN_BUCKET, Behavior: behavior}}})
		if err != nil {
			return false, err
		}
		r := resp.Responses[0]
		if r.Error != "" {
			return false, fmt.Errorf("gubernator: %s", r.Error)
		}
		return r.Status == gubernator.Status_UNDER_LIMIT, nil
	}
	return w, cluster.Stop, nil
}
