// Package natsembed runs a NATS server inside the simulator's process on a
// free loopback port, so pop-sim's gossip goes through a real NATS without
// anything installed.
package natsembed

import (
	"errors"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a running embedded NATS server. Stop it when done.
type Server struct {
	s *server.Server
}

// Start launches the server on 127.0.0.1 at a free port and waits until it
// accepts clients (up to 10 s).
func Start() (*Server, error) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT,
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20})
	if err != nil {
		return nil, err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("embedded NATS server not ready after 10s")
	}
	return &Server{s: s}, nil
}

// URL is the nats:// address clients connect to.
func (s *Server) URL() string { return s.s.ClientURL() }

// Stop shuts the server down and waits for it.
func (s *Server) Stop() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}
