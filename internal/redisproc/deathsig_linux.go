//go:build linux

package redisproc

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel SIGKILL cmd's process when the thread that
// started it, and so this process, dies (Pdeathsig): a redis-server never
// outlives the test or pop-sim that started it, even one killed by
// SIGKILL, which runs no cleanup. Go keeps the threads it forks from alive
// (none is locked to a goroutine that exits), so only the process' death
// sends it.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
