//go:build !linux

package redisproc

import "os/exec"

// dieWithParent does nothing where the kernel has no parent-death signal:
// there a redis-server outlives a process killed by SIGKILL.
func dieWithParent(*exec.Cmd) {}
