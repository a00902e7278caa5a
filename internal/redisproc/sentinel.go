package redisproc

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/edgelimit/edgelimit/internal/freeport"
)

// ErrSentinelArgs is StartSentinel's error for a master address that is
// not host:port or a master name that is empty or holds a space or a
// control character (it is written into the Sentinel's configuration
// file); nothing is started.
var ErrSentinelArgs = errors.New("redisproc: StartSentinel needs a host:port master address and a one-word master name")

// StartSentinel launches a Redis Sentinel (redis-server <file> --sentinel)
// on a free port of 127.0.0.1 that monitors the master at masterAddr under
// name with a quorum of 1, and waits until it answers PING, or fails when
// it exits first (trying up to three ports), as Start does. Its
// configuration file, which Sentinel rewrites as it learns, is in the
// Proc's directory, removed by Stop. It returns ErrSentinelArgs for a bad
// masterAddr or name and ErrNoRedis when redis-server is missing.
func StartSentinel(masterAddr, name string) (*Proc, error) {
	host, port, err := net.SplitHostPort(masterAddr)
	if err != nil || host == "" || port == "" {
		return nil, fmt.Errorf("%w: master address %q", ErrSentinelArgs, masterAddr)
	}
	if name == "" || strings.IndexFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return nil, fmt.Errorf("%w: master name %q", ErrSentinelArgs, name)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	var errs []error
	for i := 0; i < launchAttempts; i++ { // fresh ports each time (see launchAttempts)
		p, err := sentinelOnce(bin, fmt.Sprintf("%s %s %s", name, host, port))
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// sentinelOnce launches one Sentinel on a free port, monitoring master
// ("<name> <host> <port>") with a quorum of 1.
func sentinelOnce(bin, master string) (*Proc, error) {
	port, err := freeport.Get()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "edgelimit-redis-sentinel-")
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\nloglevel warning\nsentinel monitor %s 1\n",
		port, master)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &Proc{Addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, dir: dir,
		args: []string{conf, "--sentinel"}} // the file first: redis-server reads it only there
	if err := p.launch(bin); err != nil {
		p.Kill()
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}
