//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// stopWithParent has the kernel send SIGTERM to one of runApart's
// processes when this one dies, even by SIGKILL (Pdeathsig): the process
// then stops as on an interrupt, its redis-server with it (which dies
// with its own parent in any case: internal/redisproc).
func stopWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}
