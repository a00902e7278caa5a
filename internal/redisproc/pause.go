package redisproc

import (
	"errors"
	"syscall"
)

// Pause stops the server (SIGSTOP): its connections stay open and accept
// bytes, but nothing is answered until Resume: a Redis that hangs, as
// opposed to one that refuses connections (Kill).
func (p *Proc) Pause() error { return p.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (p *Proc) Resume() error { return p.signal(syscall.SIGCONT) }

func (p *Proc) signal(s syscall.Signal) error {
	if p.cmd == nil || p.cmd.Process == nil {
		return errors.New("redisproc: server not running")
	}
	return p.cmd.Process.Signal(s)
}
