// Package redisharness starts a throwaway redis-server for tests and
// examples: on a free port, without persistence, ready when it says so on
// its log and answers PING.
package redisharness

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// ErrNoRedis means redis-server is not on PATH.
var ErrNoRedis = errors.New("redis-server not found on PATH; install it with: apt-get update && apt-get install -y redis-server")

// Server is a running redis-server. The zero value is not usable; build
// one with Start.
type Server struct {
	Addr string // host:port
	cmd  *exec.Cmd
	once sync.Once
	exit chan struct{}
}

// Start runs redis-server on a free port (three tries, in case another
// process takes the port between its choice and the bind) and returns once
// it logged that it accepts connections and answered PING.
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedis
	}
	var errs []error
	for range 3 {
		s, err := start(bin)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs one redis-server with extra arguments on a free port.
func start(bin string, extra ...string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startOn(bin, port, nil, append([]string{"--port", strconv.Itoa(port)}, extra...)...)
}

// startOn runs redis-server with args (which name port), waits for its
// readiness line and a PING over tc (nil: plain TCP).
func startOn(bin string, port int, tc *tls.Config, extra ...string) (*Server, error) {
	args := append([]string{"--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no"}, extra...)
	return launch(bin, port, tc, "Ready to accept connections", args...)
}

// launch runs redis-server with exactly args, listening on port, and waits
// for a log line containing ready.
func launch(bin string, port int, tc *tls.Config, ready string, args ...string) (*Server, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, exit: make(chan struct{})}
	isReady := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		signalled := false
		for sc.Scan() {
			if !signalled {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), ready) {
					signalled = true
					close(isReady)
				}
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = cmd.Wait()
		close(s.exit)
	}()
	select {
	case <-isReady:
	case <-s.exit:
		return nil, fmt.Errorf("redis-server on port %d exited before it was ready:\n%s", port, log.String())
	}
	c := goredis.NewClient(&goredis.Options{Addr: s.Addr, TLSConfig: tc})
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("redis-server on port %d does not answer PING: %w", port, err)
	}
	return s, nil
}

// Stop kills the server and waits for it to exit. Stopping twice does
// nothing more.
func (s *Server) Stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Kill()
		<-s.exit
	})
}

// Client returns a new client of the server, closed by the caller.
func (s *Server) Client() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: s.Addr})
}
