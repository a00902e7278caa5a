package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// treeRSSEvery is how often sampleTreeRSS reads the processes' memory.
const treeRSSEvery = 250 * time.Millisecond

// sampleTreeRSS samples, until the returned func is called, the resident
// memory summed over process root and every process below it, and the
// func returns the highest sum seen, in MiB (Linux /proc; 0 elsewhere).
// A peak between two samples can be missed.
func sampleTreeRSS(root int) (stop func() float64) {
	var mu sync.Mutex
	var peak float64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(treeRSSEvery)
		defer t.Stop()
		for {
			mb := treeRSSMB(root)
			mu.Lock()
			peak = max(peak, mb)
			mu.Unlock()
			select {
			case <-quit:
				return
			case <-t.C:
			}
		}
	}()
	return func() float64 {
		close(quit)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// treeRSSMB is the resident memory of root and every process below it, in
// MiB, read from /proc/PID/stat (0 when /proc cannot be read).
func treeRSSMB(root int) float64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent, pages := map[int]int{}, map[int]int64{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if ppid, rss, ok := parseStat(stat); ok {
			parent[pid], pages[pid] = ppid, rss
		}
	}
	var sum int64
	for pid, rss := range pages {
		if below(pid, root, parent) {
			sum += rss
		}
	}
	return float64(sum*int64(os.Getpagesize())) / (1 << 20)
}

// below reports whether pid is root or one of its descendants.
func below(pid, root int, parent map[int]int) bool {
	for range len(parent) + 1 { // a bound, in case /proc changed under us into a cycle
		if pid == root {
			return true
		}
		p, ok := parent[pid]
		if !ok || p == pid {
			return false
		}
		pid = p
	}
	return false
}

// parseStat reads the parent's PID (field 4) and the resident pages
// (field 24) of a /proc/PID/stat text; the command name (field 2) may
// hold spaces and parentheses, so fields are counted after its last ')'.
func parseStat(stat []byte) (ppid int, rss int64, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3
	if len(f) < 22 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	rss, err2 := strconv.ParseInt(f[21], 10, 64)
	return ppid, rss, err1 == nil && err2 == nil
}
