// Package redisproc starts and stops a private redis-server process on a
// free loopback port, with no persistence, for the tests and for pop-sim.
// On Linux the server dies with the process that started it, even when
// that process is killed by SIGKILL (Pdeathsig).
// It is the only place that knows how to run Redis; it needs the
// redis-server binary on PATH (Debian: apt-get install -y redis-server).
package redisproc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/redis/go-redis/v9"
)

// ErrNoRedis is returned by Start when redis-server is not on PATH.
var ErrNoRedis = errors.New("redis-server not found on PATH; install it with: apt-get update && apt-get install -y redis-server")

// Proc is a running private redis-server. Stop it when done.
type Proc struct {
	Addr string // host:port it listens on
	port int
	bus  int // cluster-bus port of a cluster node; 0 otherwise
	dir  string
	cmd  *exec.Cmd
	args []string
	tls  *tls.Config // nil: plain TCP

	exited  chan struct{} // closed once the process has exited
	exitErr error         // its exit status, set before exited closes
}

// Start launches redis-server on a free port of 127.0.0.1 and waits until it
// answers PING, or fails when it exits first (trying up to three ports). extra are appended to the server's arguments
// (for instance "--maxmemory", "100mb").
func Start(extra ...string) (*Proc, error) {
	return start(nil, extra)
}

// TLS is what StartTLS needs: the PEM files the server is started with and
// the client configuration that reaches it.
type TLS struct {
	CertFile, KeyFile string // the server's certificate and private key
	CAFile            string // CA that client certificates must chain to
	// Client is the configuration the readiness check and Client use; it
	// must trust the server's certificate (and carry a client certificate
	// unless extra sets --tls-auth-clients no).
	Client *tls.Config
}

// StartTLS is Start for a server that speaks only TLS: its free port is a
// --tls-port, its plain port is off (--port 0), and it requires client
// certificates signed by c.CAFile (--tls-auth-clients yes; pass
// "--tls-auth-clients", "no" or "optional" in extra to relax that). Client
// and the readiness check use c.Client.
func StartTLS(c TLS, extra ...string) (*Proc, error) {
	if c.Client == nil {
		return nil, errors.New("redisproc: StartTLS needs a client TLS config")
	}
	args := []string{"--tls-cert-file", c.CertFile, "--tls-key-file", c.KeyFile,
		"--tls-ca-cert-file", c.CAFile, "--tls-auth-clients", "yes"}
	return start(c.Client, append(args, extra...))
}

// launchAttempts is how many fresh ports start and StartClusterWith try: a
// port free a moment ago may be taken (by another test package's server or
// an outgoing connection) before redis-server binds it.
const launchAttempts = 3

func start(tlsCfg *tls.Config, extra []string) (*Proc, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	var errs []error
	for i := 0; i < launchAttempts; i++ {
		p, err := startOnce(bin, tlsCfg, extra)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// startOnce launches redis-server on one free port.
func startOnce(bin string, tlsCfg *tls.Config, extra []string) (*Proc, error) {
	port, err := freeport.Get()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "edgelimit-redis-")
	if err != nil {
		return nil, err
	}
	p := &Proc{Addr: fmt.Sprintf("127.0.0.1:%d", port), port: port, dir: dir, tls: tlsCfg}
	ports := []string{"--port", strconv.Itoa(port)}
	if tlsCfg != nil {
		ports = []string{"--port", "0", "--tls-port", strconv.Itoa(port)}
	}
	p.args = append(ports, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
		"--protected-mode", "no", "--loglevel", "warning")
	p.args = append(p.args, extra...)
	if err := p.launch(bin); err != nil {
		p.Kill()
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

func (p *Proc) launch(bin string) error {
	p.cmd = exec.Command(bin, p.args...)
	dieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	p.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		p.exitErr = cmd.Wait()
		close(exited)
	}(p.cmd, p.exited)
	return p.waitReady()
}

// waitReady waits until the server answers PING and its INFO names p's
// process, or until the process exits (its port taken, a bad argument):
// events, not a time limit, since a loaded machine has taken over 10 s to
// start one. A server that neither answers nor exits is the test binary's
// -timeout to catch.
func (p *Proc) waitReady() error {
	c := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, TLSConfig: p.tls})
	defer c.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		if err == nil {
			err = p.ours(ctx, c)
			if err == nil || errors.Is(err, errNotOurs) {
				cancel()
				return err // errNotOurs: another server holds the port, try other ports
			}
			// INFO timed out (a loaded machine): ask again
		}
		cancel()
		select {
		case <-p.exited:
			return fmt.Errorf("redis-server on %s exited before it answered (%v): %w", p.Addr, p.exitErr, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Client returns a new go-redis client for the server (over TLS for a
// server from StartTLS); close it when done.
func (p *Proc) Client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: p.Addr, TLSConfig: p.tls})
}

// Kill stops the server at once (SIGKILL) without removing its directory, so
// Restart can bring it back on the same port, empty (no persistence).
func (p *Proc) Kill() error {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.cmd = nil
	return nil
}

// Restart starts the server again on the same address after Kill.
func (p *Proc) Restart() error {
	if p.cmd != nil {
		return errors.New("redisproc: Restart while running")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return ErrNoRedis
	}
	return p.launch(bin)
}

// Stop kills the server and removes its directory.
func (p *Proc) Stop() error {
	err := p.Kill()
	os.RemoveAll(p.dir)
	return err
}

// errNotOurs is ours' error when another process answers on the port.
var errNotOurs = errors.New("redisproc: the port is answered by another redis-server")

// ours checks that the server answering on p's port is p's own process (its
// INFO process_id), not another test's server that took the port first.
func (p *Proc) ours(ctx context.Context, c *redis.Client) error {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return err
	}
	want := "process_id:" + strconv.Itoa(p.cmd.Process.Pid) + "\r"
	if !strings.Contains(info, want) {
		return fmt.Errorf("%w: port of %s", errNotOurs, p.Addr)
	}
	return nil
}
