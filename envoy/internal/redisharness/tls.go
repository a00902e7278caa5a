package redisharness

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
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// TLSFiles are the PEM files of a TLS-only server: the CA that signed both
// certificates, and a client certificate and key the server accepts.
type TLSFiles struct {
	CA, ClientCert, ClientKey string
}

// StartTLS starts a redis-server that speaks TLS only (no plain port) and
// requires client certificates, with a throwaway CA written to dir. The PING
// check uses the client certificate.
func StartTLS(dir string) (*Server, TLSFiles, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, TLSFiles{}, ErrNoRedis
	}
	f, serverCert, serverKey, err := writeCerts(dir)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	pair, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	roots := x509.NewCertPool()
	ca, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, TLSFiles{}, err
	}
	roots.AppendCertsFromPEM(ca)
	tc := &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, TLSFiles{}, err
		}
		s, err := startOn(bin, port, tc, "--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", serverCert, "--tls-key-file", serverKey, "--tls-ca-cert-file", f.CA)
		if err == nil {
			return s, f, nil
		}
		last = err
	}
	return nil, TLSFiles{}, last
}

// writeCerts makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all ECDSA P-256 valid for a day.
func writeCerts(dir string) (f TLSFiles, serverCert, serverKey string, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, "", "", err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "edgelimit test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, "", "", err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, "", "", err
	}
	f.CA = filepath.Join(dir, "ca.pem")
	if err := writePEM(f.CA, "CERTIFICATE", caDER); err != nil {
		return f, "", "", err
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return "", "", err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return "", "", err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return "", "", err
		}
		c, k := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		if err := writePEM(c, "CERTIFICATE", der); err != nil {
			return "", "", err
		}
		return c, k, writePEM(k, "EC PRIVATE KEY", kder)
	}
	if serverCert, serverKey, err = leaf("server", 2, x509.ExtKeyUsageServerAuth); err != nil {
		return f, "", "", err
	}
	f.ClientCert, f.ClientKey, err = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return f, serverCert, serverKey, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// TLSClient returns a client of a StartTLS server using f's client
// certificate; the caller closes it.
func TLSClient(addr string, f TLSFiles) *goredis.Client {
	pair, _ := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	roots := x509.NewCertPool()
	if ca, err := os.ReadFile(f.CA); err == nil {
		roots.AppendCertsFromPEM(ca)
	}
	return goredis.NewClient(&goredis.Options{Addr: addr, TLSConfig: &tls.Config{
		RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}})
}
