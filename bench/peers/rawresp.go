package peers

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strconv"
	"time"
)

// RawEvalSha is the Go floor of the Redis table, not a limiter: one EVALSHA
// of sha per decision over a bare net.Conn (RESP written by hand, no client
// library, no timeouts, no allocation beyond the key), reading the script's
// reply as an array of integers whose first says whether it allowed. A
// caller takes an idle connection or dials one, so N callers use N
// connections, as redis-benchmark -c N does. It measures what any Go
// process pays per round trip on this machine apart from a client library's
// own work. keyOf maps an identity to its Redis key; args are the script's
// ARGV after now (ms), which each call puts first. close closes every
// connection.
func RawEvalSha(addr, sha string, keyOf func(string) string, args []string) (Decider, func(), error) {
	idle := make(chan *rawConn, 1024)
	d := func(_ context.Context, key string) (bool, error) {
		var c *rawConn
		select {
		case c = <-idle:
		default:
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				return false, err
			}
			c = &rawConn{c: nc, r: bufio.NewReader(nc)}
		}
		ok, err := c.evalSha(sha, keyOf(key), time.Now().UnixMilli(), args)
		if err != nil {
			c.c.Close()
			return false, err
		}
		select {
		case idle <- c:
		default:
			c.c.Close()
		}
		return ok, nil
	}
	closeAll := func() {
		for {
			select {
			case c := <-idle:
				c.c.Close()
			default:
				return
			}
		}
	}
	return d, closeAll, nil
}

// rawConn is one connection with its reader and a reused output buffer.
type rawConn struct {
	c   net.Conn
	r   *bufio.Reader
	out []byte
}

// evalSha writes EVALSHA sha 1 key now args... and reads the reply.
func (c *rawConn) evalSha(sha, key string, now int64, args []string) (bool, error) {
	b := append(c.out[:0], '*')
	b = strconv.AppendInt(b, int64(5+len(args)), 10)
	b = append(b, "\r\n"...)
	b = appendBulk(b, "EVALSHA")
	b = appendBulk(b, sha)
	b = appendBulk(b, "1")
	b = appendBulk(b, key)
	var num [20]byte
	b = appendBulkBytes(b, strconv.AppendInt(num[:0], now, 10))
	for _, a := range args {
		b = appendBulk(b, a)
	}
	c.out = b
	if _, err := c.c.Write(b); err != nil {
		return false, err
	}
	return c.readReply()
}

// appendBulk appends s as a RESP bulk string.
func appendBulk(b []byte, s string) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

func appendBulkBytes(b, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, "\r\n"...)
	b = append(b, s...)
	return append(b, "\r\n"...)
}

// readReply reads "*n" and n integer lines; the first integer is allowed.
func (c *rawConn) readReply() (bool, error) {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return false, err
	}
	if len(line) < 3 || line[0] != '*' {
		return false, errors.New("raw EVALSHA: unexpected reply " + string(line))
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return false, err
	}
	allowed := false
	for i := 0; i < n; i++ {
		if line, err = c.r.ReadSlice('\n'); err != nil {
			return false, err
		}
		if i == 0 {
			allowed = len(line) > 1 && line[1] == '1'
		}
	}
	return allowed, nil
}
