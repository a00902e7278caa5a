// Package tlstest makes throwaway TLS material for tests: a certificate
// authority, a server certificate for 127.0.0.1 and localhost and a client
// certificate, all ECDSA P-256, generated at test time and written as PEM
// files into the test's temporary directory, with ready tls.Configs for
// both ends. Nothing here is fit for production use.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Files are the paths of the PEM files New writes: what a server started
// as a separate process (redis-server) is given.
type Files struct {
	CA         string // the CA certificate
	ServerCert string // server certificate, for 127.0.0.1, ::1 and localhost
	ServerKey  string // its private key (PKCS #8)
	ClientCert string // client certificate, for client authentication
	ClientKey  string // its private key (PKCS #8)
}

// Material is one throwaway CA with a server and a client certificate it
// signed. Clone the configs before changing them.
type Material struct {
	Files
	// Pool holds the CA certificate alone.
	Pool *x509.CertPool
	// Server presents the server certificate and requires a client
	// certificate signed by the CA (tls.RequireAndVerifyClientCert).
	Server *tls.Config
	// Client trusts only the CA and presents the client certificate.
	Client *tls.Config
}

// New generates a fresh CA, server and client certificate (valid for one
// hour) into t.TempDir(). It calls t.Fatal when that fails. Two calls give
// two CAs that do not trust each other.
func New(t testing.TB) *Material {
	t.Helper()
	m, err := generate(t.TempDir())
	require.NoError(t, err, "tlstest")
	return m
}

func generate(dir string) (*Material, error) {
	now := time.Now()
	caKey, caDER, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "edgelimit test CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, now, nil, nil)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvKey, srvDER, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, now, ca, caKey)
	if err != nil {
		return nil, err
	}
	cliKey, cliDER, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "edgelimit test client"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, now, ca, caKey)
	if err != nil {
		return nil, err
	}
	m := &Material{Files: Files{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
	}}
	for _, f := range []struct {
		cert, key string
		der       []byte
		priv      *ecdsa.PrivateKey
	}{{m.CA, "", caDER, nil}, {m.ServerCert, m.ServerKey, srvDER, srvKey},
		{m.ClientCert, m.ClientKey, cliDER, cliKey}} {
		if err := writePEM(f.cert, "CERTIFICATE", f.der); err != nil {
			return nil, err
		}
		if f.priv == nil {
			continue // the CA's key never leaves memory
		}
		kder, err := x509.MarshalPKCS8PrivateKey(f.priv)
		if err != nil {
			return nil, err
		}
		if err := writePEM(f.key, "PRIVATE KEY", kder); err != nil {
			return nil, err
		}
	}
	m.Pool = x509.NewCertPool()
	m.Pool.AddCert(ca)
	m.Server = &tls.Config{MinVersion: tls.VersionTLS12, ClientCAs: m.Pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		Certificates: []tls.Certificate{{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}}}
	m.Client = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: m.Pool,
		Certificates: []tls.Certificate{{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}}}
	return m, nil
}

// issue makes a new P-256 key and a certificate for it from tmpl, valid
// from a minute before now for an hour, signed by parent (self-signed when
// parent is nil).
func issue(tmpl *x509.Certificate, now time.Time, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-time.Minute)
	tmpl.NotAfter = now.Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	return key, der, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
