// Command budget-lines is the helper of scripts/budget-lines.sh, which
// measures the budget limiter against pure Redis on every line of its
// targets (docs/budget.md): it writes the crowd trace those lines replay,
// reads the runs' pop-sim -json reports into one aligned table, and sets
// candidates (one run of the script each) against every target, by how
// much each misses.
//
//	budget-lines crowd -span 1s > crowd.csv   # a crowd of 10× the limit from every PoP
//	budget-lines table DIR LINE...            # DIR/LINE.json per line, one table
//	budget-lines table -json DIR LINE...      # the same rows as JSON
//	budget-lines targets [-md|-json] NAME=DIR...  # each candidate's DIR/lines.json against every target
//
// Bad flags or unreadable reports exit 2 with one line on stderr.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// usage is what a call without a known subcommand prints.
const usage = "usage: budget-lines crowd -span D [flags] > trace.csv | budget-lines table [-json] DIR LINE... | budget-lines targets [-md|-json] NAME=DIR..."

// run runs one subcommand and returns the exit code: 0, or 2 after one
// line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "crowd":
		err = crowdCmd(args[1:], stdout, stderr)
	case "table":
		err = tableCmd(args[1:], stdout, stderr)
	case "targets":
		err = targetsCmd(args[1:], stdout, stderr)
	default:
		err = fmt.Errorf("unknown subcommand %q; %s", args[0], usage)
	}
	if err != nil {
		fmt.Fprintln(stderr, "budget-lines: "+err.Error())
		return 2
	}
	return 0
}
