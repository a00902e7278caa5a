package main

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVmHWM(t *testing.T) {
	status := []byte("Name:\tpop-sim\nVmPeak:\t 9000 kB\nVmHWM:\t   204800 kB\nVmRSS:\t 1024 kB\n")
	got := vmHWM(status)
	require.EqualValues(t, 200, got, "VmHWM 204800 kB read as %v MiB, want 200", got)
	got = vmHWM([]byte("VmRSS:\t1 kB\n"))
	require.EqualValues(t, 0, got, "no VmHWM line read as %v, want 0", got)
}

// TestPeakRSSSeesAnAllocation: on Linux a mode that touches 64 MiB reports
// a peak of at least that.
func TestPeakRSSSeesAnAllocation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is read from /proc on Linux only; elsewhere it is 0 by design")
	}
	m := startRSS()
	_, statErr := os.Stat("/proc/self/clear_refs")
	require.True(t, m.reset, "could not reset the high-water mark (clear_refs: %v)", statErr)
	b := make([]byte, 64<<20)
	for i := range b {
		b[i] = 1
	}
	got := m.peakMB()
	require.False(t, got < 64, "peak %v MiB after touching 64 MiB", got)
	runtime.KeepAlive(b)
}
