package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the files kube-apiserver needs for TLS and service accounts.
// Everything is generated per control plane (ECDSA P-256: fast to make).
type pki struct {
	CAFile, CAPEM string // CA that signed the serving certificate
	ServingCert   string
	ServingKey    string
	SAPublicKey   string // --service-account-key-file
	SASigningKey  string // --service-account-signing-key-file
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
}

func writePEM(path, blockType string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal key: %w", err)
	}
	return writePEM(path, "PRIVATE KEY", der)
}

// newPKI writes a CA, a serving certificate for 127.0.0.1/localhost signed
// by it, and a service account key pair into dir.
func newPKI(dir string) (*pki, error) {
	p := &pki{
		CAFile:       filepath.Join(dir, "ca.crt"),
		ServingCert:  filepath.Join(dir, "apiserver.crt"),
		ServingKey:   filepath.Join(dir, "apiserver.key"),
		SAPublicKey:  filepath.Join(dir, "sa.pub"),
		SASigningKey: filepath.Join(dir, "sa.key"),
	}
	caKey, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	// Backdated an hour: a clock step during the test must not make the
	// certificates "not yet valid".
	now := time.Now().Add(-time.Hour)
	caSerial, err := serial()
	if err != nil {
		return nil, err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: "gpusched-e2e-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	p.CAPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("parse CA: %w", err)
	}
	if err := p.writeServing(ca, caKey, now); err != nil {
		return nil, err
	}
	if err := p.writeServiceAccountKeys(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) writeServing(ca *x509.Certificate, caKey crypto.Signer, now time.Time) error {
	key, err := newKey()
	if err != nil {
		return fmt.Errorf("serving key: %w", err)
	}
	sn, err := serial()
	if err != nil {
		return err
	}
	template := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	if err := writePEM(p.ServingCert, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.ServingKey, key)
}

func (p *pki) writeServiceAccountKeys() error {
	key, err := newKey()
	if err != nil {
		return fmt.Errorf("service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("service account public key: %w", err)
	}
	if err := writePEM(p.SAPublicKey, "PUBLIC KEY", pub); err != nil {
		return err
	}
	return writeKey(p.SASigningKey, key)
}
