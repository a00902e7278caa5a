package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThreePoPsHoldTheLimit builds the example, runs NATS and three PoPs
// as separate processes on a private redis-server, sends the load for
// about three 2-second windows, and checks what run.sh shows: no window
// admits more of the attacker than 1.25 × the limit, every full window
// admits close to the limit (the limit is enforced, not just denied), no
// calm request is refused, and every PoP exits cleanly on SIGTERM.
func TestThreePoPsHoldTheLimit(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "multipop")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		require.FailNow(t, fmt.Sprintf("go build: %v\n%s", err, out))
	}
	redis := redistest.Start(t)
	const limit, window = 40, 2 * time.Second
	natsURL := fmt.Sprintf("nats://127.0.0.1:%d", port(t))
	start(t, bin, "nats", "-port", strings.TrimPrefix(natsURL, "nats://127.0.0.1:"))
	var targets []string
	var pops []*exec.Cmd
	for i := 1; i <= 3; i++ {
		p := port(t)
		pops = append(pops, start(t, bin, "pop", "-name", fmt.Sprint("pop", i), "-port", fmt.Sprint(p),
			"-redis", redis.Addr, "-nats", natsURL, "-limit", fmt.Sprint(limit), "-window", window.String()))
		targets = append(targets, fmt.Sprintf("http://127.0.0.1:%d/", p))
	}
	o := loadOptions{targets: targets, limit: limit, window: window, duration: 7 * time.Second,
		attackRate: 90, calm: 10, calmEvery: 500 * time.Millisecond, tolerance: 1.25}
	tl, err := runLoad(context.Background(), o)
	require.NoError(t, err)
	var report bytes.Buffer
	tl.report(&report, o)
	t.Log("\n" + report.String())
	err = tl.check(o)
	assert.NoError(t, err)
	for i, c := range tl.attacker {
		if tl.full(i) {
			assert.GreaterOrEqual(t, c.admitted, limit*8/10, "a full window admitted %d of the attacker; want close to the limit %d", c.admitted, limit)
		}
	}
	for i, p := range pops {
		err := p.Process.Signal(syscall.SIGTERM)
		require.NoError(t, err)
		err = p.Wait()
		assert.NoError(t, err, "pop%d on SIGTERM", i+1)
	}
}

// TestRunScriptParses: run.sh is valid bash.
func TestRunScriptParses(t *testing.T) {
	out, err := exec.Command("bash", "-n", "run.sh").CombinedOutput()
	require.NoError(t, err, "bash -n run.sh: %v\n%s", err, out)
}

func port(t *testing.T) int {
	t.Helper()
	p, err := freeport.Get()
	require.NoError(t, err)
	return p
}

// start runs bin with args until the test ends (SIGTERM, then wait).
func start(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	err := cmd.Start()
	require.NoError(t, err)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
	})
	return cmd
}
