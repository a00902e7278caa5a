package tlstest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHandshake: over a loopback TCP connection the client config
// completes a mutually authenticated handshake with the server config,
// under the names 127.0.0.1 and localhost; a client of another CA, a
// client that trusts the CA but presents another CA's client certificate
// (refused by the server, which fails to verify it) and a client that
// trusts the CA but has no certificate are all refused.
func TestHandshake(t *testing.T) {
	m, other := New(t), New(t)
	for _, name := range []string{"127.0.0.1", "localhost"} {
		cliErr, srvErr := exchange(t, m.Server, m.Client, name)
		require.NoError(t, cliErr, "%s: client %v, server %v; want a handshake", name, cliErr, srvErr)
		require.NoError(t, srvErr, "%s: client %v, server %v; want a handshake", name, cliErr, srvErr)
	}
	cliErr, srvErr := exchange(t, m.Server, other.Client, "127.0.0.1")
	require.True(t, errors.As(cliErr, new(x509.UnknownAuthorityError)), "client of another CA: client %v, server %v; want unknown authority, refused", cliErr, srvErr)
	require.Error(t, srvErr, "client of another CA: client %v, server %v; want unknown authority, refused", cliErr, srvErr)
	// A client that trusts the server's CA but presents a certificate of
	// another CA: the server itself must refuse it. Its Handshake fails
	// verifying the client certificate; the client, whose handshake may
	// complete first under TLS 1.3, sees the server's alert at its read.
	foreignCert := &tls.Config{RootCAs: m.Pool, Certificates: other.Client.Certificates}
	cliErr, srvErr = exchange(t, m.Server, foreignCert, "127.0.0.1")
	require.True(t, errors.As(srvErr, new(x509.UnknownAuthorityError)), "client certificate of another CA: server %v; want it to refuse the certificate (unknown authority)", srvErr)
	require.Contains(t, srvErr.Error(), "certificate", "client certificate of another CA: server %v; want it to refuse the certificate (unknown authority)", srvErr)
	require.Error(t, cliErr, "client certificate of another CA: client %v; want the server's TLS alert", cliErr)
	require.Contains(t, cliErr.Error(), "remote error: tls:", "client certificate of another CA: client %v; want the server's TLS alert", cliErr)
	t.Logf("client certificate of another CA: client %v; server %v", cliErr, srvErr)
	noCert := &tls.Config{RootCAs: m.Pool}
	cliErr, srvErr = exchange(t, m.Server, noCert, "127.0.0.1")
	require.Error(t, cliErr, "client without certificate: client %v, server %v; want both to fail", cliErr, srvErr)
	require.Error(t, srvErr, "client without certificate: client %v, server %v; want both to fail", cliErr, srvErr)
}

// TestFiles: the PEM files hold the same material as the configs, as a
// separate server process loads them: key pairs from the files complete a
// handshake with each other and with the ready configs.
func TestFiles(t *testing.T) {
	m := New(t)
	srvPair, err := tls.LoadX509KeyPair(m.ServerCert, m.ServerKey)
	require.NoError(t, err)
	cliPair, err := tls.LoadX509KeyPair(m.ClientCert, m.ClientKey)
	require.NoError(t, err)
	caPEM, err := os.ReadFile(m.CA)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(caPEM), "%s holds no certificate", m.CA)
	srv := &tls.Config{Certificates: []tls.Certificate{srvPair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert}
	cli := &tls.Config{Certificates: []tls.Certificate{cliPair}, RootCAs: pool}
	for _, c := range []struct {
		name     string
		srv, cli *tls.Config
	}{{"files/files", srv, cli}, {"files/config", srv, m.Client}, {"config/files", m.Server, cli}} {
		cliErr, srvErr := exchange(t, c.srv, c.cli, "localhost")
		require.NoError(t, cliErr, "%s: client %v, server %v", c.name, cliErr, srvErr)
		require.NoError(t, srvErr, "%s: client %v, server %v", c.name, cliErr, srvErr)
	}
}

// exchange runs one TLS connection over loopback TCP: the server
// handshakes and writes "ok", the client (verifying serverName) reads it.
// It returns each side's first error; the server's is also an error when
// the client presented no certificate.
func exchange(t *testing.T, server, client *tls.Config, serverName string) (cliErr, srvErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang bound only: the handshake fails or succeeds by itself
		s := tls.Server(c, server)
		if err := s.Handshake(); err != nil {
			done <- err
			return
		}
		if len(s.ConnectionState().PeerCertificates) == 0 {
			done <- errors.New("no client certificate")
			return
		}
		_, err = s.Write([]byte("ok"))
		done <- err
	}()
	cfg := client.Clone()
	cfg.ServerName = serverName
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", ln.Addr().String(), cfg)
	if err == nil {
		c.SetDeadline(time.Now().Add(30 * time.Second)) // a hang bound only: the handshake fails or succeeds by itself
		buf := make([]byte, 2)
		if _, err = io.ReadFull(c, buf); err == nil && string(buf) != "ok" {
			err = fmt.Errorf("read %q, want \"ok\"", buf)
		}
		c.Close()
	}
	return err, <-done
}
