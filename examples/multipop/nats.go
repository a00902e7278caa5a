package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// natsCmd runs a NATS server embedded in this process on 127.0.0.1:port
// until ctx ends; it prints its URL once it accepts clients.
func natsCmd(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("nats", flag.ContinueOnError)
	port := fs.Int("port", 4222, "client port on 127.0.0.1")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: *port, NoLog: true, NoSigs: true})
	if err != nil {
		return err
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return errors.New("nats: not ready after 10s")
	}
	fmt.Fprintf(out, "nats ready on %s\n", s.ClientURL())
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}
