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
	// Backdated an hour: a clock step during the test must not make the
	// certificates "not yet valid".
	now := time.Now().Add(-time.Hour)
	ca, caKey, caDER, err := newCA("gpusched-e2e-ca", now)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	p.CAPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	if err := p.writeServing(ca, caKey, now); err != nil {
		return nil, err
	}
	if err := p.writeServiceAccountKeys(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pki) writeServing(ca *x509.Certificate, caKey crypto.Signer, now time.Time) error {
	der, key, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now,
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}, ca, caKey)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	if err := writePEM(p.ServingCert, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(p.ServingKey, key)
}

// newCA makes a self-signed CA named cn, valid for a day from now.
func newCA(cn string, now time.Time) (*x509.Certificate, crypto.Signer, []byte, error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s key: %w", cn, err)
	}
	sn, err := serial()
	if err != nil {
		return nil, nil, nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now,
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s certificate: %w", cn, err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse %s: %w", cn, err)
	}
	return ca, key, der, nil
}

// issue signs template (a serial is set) for a new key with the CA.
func issue(template, ca *x509.Certificate, caKey crypto.Signer) ([]byte, crypto.Signer, error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	if template.SerialNumber, err = serial(); err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, key.Public(), caKey)
	return der, key, err
}

// LoopbackCert makes a fresh CA named caName and a certificate it signed
// for 127.0.0.1 and localhost (named cn), backdated an hour as newPKI's:
// for another package's server (Kueue's webhooks), in PEM.
func LoopbackCert(caName, cn string) (caPEM, certPEM, keyPEM []byte, err error) {
	now := time.Now().Add(-time.Hour)
	ca, caKey, caDER, err := newCA(caName, now)
	if err != nil {
		return nil, nil, nil, err
	}
	der, key, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		NotBefore:   now,
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:    []string{"localhost"},
	}, ca, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s certificate: %w", cn, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s key: %w", cn, err)
	}
	return pemOf("CERTIFICATE", caDER), pemOf("CERTIFICATE", der), pemOf("PRIVATE KEY", keyDER), nil
}

func pemOf(blockType string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
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
