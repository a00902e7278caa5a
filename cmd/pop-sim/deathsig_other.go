//go:build !linux

package main

import "os/exec"

// stopWithParent does nothing where the kernel has no parent-death
// signal: there a process of runApart outlives a parent killed by SIGKILL.
func stopWithParent(*exec.Cmd) {}
