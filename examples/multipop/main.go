// Command multipop is edgelimit's multi-process example: three PoPs, each
// an HTTP server behind the rate-limit middleware and the local-first
// budget limiter (package sync/budget), gossiping over NATS, sharing one
// redis-server and one NATS, loaded by
// an attacker whose requests are spread over all three PoPs and by calm
// clients far below the limit. It prints, per window, how many of the
// attacker's requests the three PoPs admitted together against the limit.
//
//	examples/multipop/run.sh        # builds it, starts everything, runs the load, stops everything
//
// run.sh drives its subcommands, which also run alone:
//
//	multipop ports N                                 print N free loopback ports
//	multipop nats -port P                            an embedded NATS server
//	multipop pop -name fra1 -port P -redis A -nats U  one PoP
//	multipop load -targets URL,URL,URL               the load and the report
//
// Every subcommand takes -h.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: multipop ports|nats|pop|load [flags]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "ports":
		err = portsCmd(args, os.Stdout)
	case "nats":
		err = natsCmd(ctx, args, os.Stdout)
	case "pop":
		err = popCmd(ctx, args, os.Stdout)
	case "load":
		err = loadCmd(ctx, args, os.Stdout)
	default:
		err = fmt.Errorf("unknown subcommand %q (want ports, nats, pop or load)", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "multipop:", err)
		os.Exit(1)
	}
}
