// Command tlsgen makes the TLS material of a sessionpipe NATS cluster: a
// CA, one server certificate for the NATS nodes (valid for clients, routes
// and leaf nodes, so it carries both server and client usage), and client
// certificates for whoever must present one (leaf nodes, mutual TLS).
//
//	go run ./deploy/tlsgen [-dir DIR] [-san NAMES] [-client NAME]...
//
// Files in DIR: ca.pem, ca-key.pem, server.pem, server-key.pem and
// client-NAME.pem, client-NAME-key.pem. An existing CA in DIR is reused,
// so clients can be added later; server and client files are rewritten.
// Keys are ECDSA P-256, written with mode 0600. It is meant for a team
// without a PKI; one that has one (step-ca, Vault, cfssl) issues the same
// shapes there: see deploy/tls/README.md.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// names is a repeatable flag.
type names []string

func (n *names) String() string     { return strings.Join(*n, ",") }
func (n *names) Set(v string) error { *n = append(*n, v); return nil }

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "tlsgen:", err)
		os.Exit(2)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("tlsgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "deploy/tls/out", "output directory")
	san := fs.String("san", "nats-1,nats-2,nats-3,localhost,127.0.0.1", "comma-separated DNS names and IP addresses the server certificate is valid for: every name clients, routes and leaf nodes dial")
	days := fs.Int("days", 825, "validity of the server and client certificates, in days (the CA gets ten years)")
	var clients names
	fs.Var(&clients, "client", "issue a client certificate with this common name (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	ca, caKey, err := loadOrMakeCA(*dir, stderr)
	if err != nil {
		return err
	}
	validity := time.Duration(*days) * 24 * time.Hour
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "sessionpipe-nats", Organization: []string{"sessionpipe"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for n := range strings.SplitSeq(*san, ",") {
		n = strings.TrimSpace(n)
		if ip := net.ParseIP(n); ip != nil {
			server.IPAddresses = append(server.IPAddresses, ip)
		} else if n != "" {
			server.DNSNames = append(server.DNSNames, n)
		}
	}
	if err := issue(*dir, "server", server, validity, ca, caKey); err != nil {
		return err
	}
	for _, c := range clients {
		if c == "" || strings.ContainsAny(c, "/\\") {
			return fmt.Errorf("-client %q: want a plain name", c)
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: c, Organization: []string{"sessionpipe"}},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := issue(*dir, "client-"+c, tmpl, validity, ca, caKey); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "TLS material in %s (server valid for %s; %d client certificates)\n", *dir, *san, len(clients))
	return nil
}

// loadOrMakeCA returns the CA in dir, making one when there is none.
func loadOrMakeCA(dir string, stderr io.Writer) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, certErr := os.ReadFile(filepath.Join(dir, "ca.pem"))
	keyPEM, keyErr := os.ReadFile(filepath.Join(dir, "ca-key.pem"))
	if certErr == nil && keyErr == nil {
		cert, err := parseCert(certPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "ca.pem"), err)
		}
		key, err := parseKey(keyPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "ca-key.pem"), err)
		}
		fmt.Fprintln(stderr, "reusing the CA in", dir)
		return cert, key, nil
	}
	if !errors.Is(certErr, os.ErrNotExist) || !errors.Is(keyErr, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s holds half a CA (ca.pem: %v, ca-key.pem: %v)", dir, certErr, keyErr)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "sessionpipe CA", Organization: []string{"sessionpipe"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(10, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(filepath.Join(dir, "ca.pem"), "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	if err := writeKey(filepath.Join(dir, "ca-key.pem"), key); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// issue signs tmpl with the CA and writes NAME.pem and NAME-key.pem.
func issue(dir, name string, tmpl *x509.Certificate, validity time.Duration, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("issue %s: %w", name, err)
	}
	if err := writePEM(filepath.Join(dir, name+".pem"), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+"-key.pem"), key)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func parseCert(b []byte) (*x509.Certificate, error) {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(blk.Bytes)
}

func parseKey(b []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("CA key is not ECDSA")
	}
	return ek, nil
}
