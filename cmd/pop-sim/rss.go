package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// rssMeter measures one mode's peak resident memory on Linux: before the
// mode the Go heap is returned to the OS and the kernel's high-water mark
// of the process is reset (writing 5 to /proc/self/clear_refs), after it
// VmHWM in /proc/self/status is the mode's peak (the trace and the ground
// truth, which every mode shares, included). Elsewhere it reports 0.
type rssMeter struct{ reset bool }

func startRSS() rssMeter {
	debug.FreeOSMemory()
	return rssMeter{reset: os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil}
}

// peakMB is the peak since startRSS in MiB; 0 when the mark could not be
// reset or read.
func (m rssMeter) peakMB() float64 {
	if !m.reset {
		return 0
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return vmHWM(status)
}

// vmHWM reads the VmHWM line ("VmHWM:   123456 kB") of a
// /proc/PID/status text, in MiB; 0 when absent.
func vmHWM(status []byte) float64 {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0
		}
		return kb / 1024
	}
	return 0
}
