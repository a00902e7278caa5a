package redisharness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// SentinelMaster is the master name StartSentinel monitors.
const SentinelMaster = "edgelimit"

// StartSentinel starts a Sentinel (redis-server --sentinel, quorum 1)
// monitoring master as SentinelMaster, with its configuration file in dir.
func StartSentinel(master *Server, dir string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	host, port, err := splitAddr(master.Addr)
	if err != nil {
		return nil, err
	}
	var last error
	for i := range 3 {
		sp, err := freePort()
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\nsentinel monitor %s %s %d 1\n", sp, SentinelMaster, host, port)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			return nil, err
		}
		s, err := launch(bin, sp, nil, "+monitor master", conf, "--sentinel")
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, last
}

func splitAddr(addr string) (string, int, error) {
	for i := len(addr) - 1; i >= 0; i-- {
		if addr[i] == ':' {
			p, err := strconv.Atoi(addr[i+1:])
			return addr[:i], p, err
		}
	}
	return "", 0, fmt.Errorf("address %q has no port", addr)
}
