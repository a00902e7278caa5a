package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
)

// portsCmd prints n free loopback TCP ports, one per line; all of them are
// held until all are found, so they differ.
func portsCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("ports", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	n, err := strconv.Atoi(fs.Arg(0))
	if err != nil || n < 1 {
		return fmt.Errorf("ports: want a count, got %q", fs.Arg(0))
	}
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		held = append(held, l)
	}
	for _, l := range held {
		fmt.Fprintln(out, l.Addr().(*net.TCPAddr).Port)
	}
	return nil
}
