package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestGetIsBindable(t *testing.T) {
	p, err := Get()
	if err != nil || p <= 0 {
		t.Fatalf("Get() = %d, %v", p, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatalf("port %d from Get is not bindable: %v", p, err)
	}
	l.Close()
}
