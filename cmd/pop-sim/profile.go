package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
)

// profileFlags registers -cpuprofile: where a long run's CPU profile goes,
// for whoever wants to know where a run at scale spends its time.
func (o *options) profileFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to FILE (go tool pprof); modes run apart (-parallel) each write their process's to FILE.MODE")
}

// startProfile starts the CPU profile when -cpuprofile names a file; the
// returned stop ends and writes it (a no-op without the flag).
func (o *options) startProfile() (stop func(), err error) {
	if o.cpuProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(o.cpuProfile)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
