// Package freeport finds a free TCP port on the loopback interface for the
// test harnesses (private redis-server, embedded NATS) and pop-sim.
package freeport

import "net"

// Get returns a port of 127.0.0.1 that was free a moment ago: it listens on
// port 0, reads the port the kernel chose and closes. Another process may
// take it before the caller binds it; callers start their server at once.
func Get() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
