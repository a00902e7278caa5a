//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// proc is one process of /proc: its id, parent, command name and state.
type proc struct {
	pid, ppid int
	comm      string
	state     byte
}

// processes reads every process of /proc (those that vanish while read
// are skipped).
func processes() map[int]proc {
	out := map[int]proc{}
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		s := string(b) // pid (comm) state ppid ...
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		f := strings.Fields(s[closing+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out[pid] = proc{pid: pid, ppid: ppid, comm: s[open+1 : closing], state: f[0][0]}
	}
	return out
}

// descendants are root's live descendants (zombies left out).
func descendants(root int) []proc {
	ps := processes()
	var out []proc
	var walk func(int)
	walk = func(p int) {
		for _, c := range ps {
			if c.ppid == p && c.state != 'Z' {
				out = append(out, c)
				walk(c.pid)
			}
		}
	}
	walk(root)
	return out
}

// alive reports whether pid runs (a zombie, dead but not yet reaped by
// its new parent, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// hang bounds the waits below: only a process that never starts or never
// dies trips it, on however loaded a machine.
const hang = 60 * time.Second

// startPopSim runs this test binary as pop-sim with args, and waits for
// the first progress line on its stderr: by then its servers are up.
func startPopSim(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, append(args, "-progress-lines")...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start(), "starting pop-sim")
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	progress := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		first := true
		for sc.Scan() {
			if first && strings.HasPrefix(sc.Text(), "progress ") {
				close(progress)
				first = false
			}
		}
	}()
	select {
	case <-progress:
	case <-time.After(hang):
		require.Failf(t, "no progress", "pop-sim %v printed no progress line in %s", args, hang)
	}
	return cmd
}

// killAndWaitGone SIGKILLs cmd and waits until none of procs runs. It
// kills the ones still running after hang (the test's own descendants),
// so a failure leaves nothing behind either.
func killAndWaitGone(t *testing.T, cmd *exec.Cmd, procs []proc, what string) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	gone := assert.Eventually(t, func() bool {
		for _, p := range procs {
			if alive(p.pid) {
				return false
			}
		}
		return true
	}, hang, 10*time.Millisecond, "%s: processes still running %s after the SIGKILL", what, hang)
	if !gone {
		for _, p := range procs {
			if alive(p.pid) {
				t.Logf("%s: %s (pid %d) outlived its parent", what, p.comm, p.pid)
				_ = syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	}
}

// bigRun lasts far longer than the tests wait for its first progress line.
var bigRun = []string{"-pops", "3", "-identities", "100000", "-requests", "1000000", "-limit", "10", "-window", "1s"}

// TestKilledRunLeavesNoRedisServer: a pop-sim killed by SIGKILL in the
// middle of a run takes its redis-server with it (before, the server ran
// on with no parent).
func TestKilledRunLeavesNoRedisServer(t *testing.T) {
	cmd := startPopSim(t, append(bigRun, "-mode", "redis", "-parallel", "1")...)
	var servers []proc
	for _, p := range descendants(cmd.Process.Pid) {
		if p.comm == "redis-server" {
			servers = append(servers, p)
		}
	}
	require.Len(t, servers, 1, "pop-sim runs one redis-server while it simulates")
	killAndWaitGone(t, cmd, servers, "pop-sim -parallel 1")
}

// parallelRun starts pop-sim -parallel 2 and returns it with its tree of
// processes once both of its processes run their redis-server.
func parallelRun(t *testing.T) (*exec.Cmd, []proc) {
	t.Helper()
	cmd := startPopSim(t, append(bigRun, "-mode", "redis,local", "-parallel", "2")...)
	var tree []proc
	require.Eventually(t, func() bool { // the second process may not have started its server yet
		tree = descendants(cmd.Process.Pid)
		n := 0
		for _, p := range tree {
			if p.comm == "redis-server" {
				n++
			}
		}
		return n == 2
	}, hang, 10*time.Millisecond, "pop-sim -parallel 2 runs two processes, each with its redis-server")
	return cmd, tree
}

// TestKilledParallelRunLeavesNothing: with -parallel 2, SIGKILL of the
// parent ends its two pop-sim processes and their redis-servers.
func TestKilledParallelRunLeavesNothing(t *testing.T) {
	cmd, tree := parallelRun(t)
	require.Len(t, tree, 4, "two pop-sim processes and two redis-servers below the parent: %+v", tree)
	killAndWaitGone(t, cmd, tree, "the parent of -parallel 2")
}

// TestKilledModeProcessLeavesNothing: with -parallel 2, SIGKILL of one of
// the parent's processes ends its redis-server; the parent then fails
// and stops the other, and nothing of the run is left.
func TestKilledModeProcessLeavesNothing(t *testing.T) {
	cmd, tree := parallelRun(t)
	var child proc
	var childServer []proc
	for _, p := range tree {
		if p.ppid == cmd.Process.Pid && p.comm != "redis-server" {
			child = p
		}
	}
	require.NotZero(t, child.pid, "a pop-sim process below the parent")
	for _, p := range tree {
		if p.ppid == child.pid && p.comm == "redis-server" {
			childServer = append(childServer, p)
		}
	}
	require.Len(t, childServer, 1, "the process %d runs one redis-server", child.pid)
	require.NoError(t, syscall.Kill(child.pid, syscall.SIGKILL), "killing one process of the run")
	assert.Eventually(t, func() bool { return !alive(childServer[0].pid) }, hang, 10*time.Millisecond,
		"the killed process' redis-server ends with it")
	err := cmd.Wait() // the parent sees its process fail, stops the other and exits
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the parent fails when one of its processes is killed")
	assert.Equal(t, 1, exit.ExitCode(), "the parent's exit status")
	for _, p := range tree {
		if alive(p.pid) {
			assert.Failf(t, "left behind", "%s (pid %d) outlived the run", p.comm, p.pid)
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}
