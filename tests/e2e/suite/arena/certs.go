package arena

import (
	"fmt"
	"os"
	"path/filepath"

	"gpusched.io/e2e/suite/controlplane"
)

// servingCert is what Kueue serves its webhooks, metrics and visibility
// API with, in place of internalCertManagement's self-signed certificate
// (which names the webhook Service, unreachable here): a CA of the test's
// own, and a certificate it signed for 127.0.0.1 and localhost.
type servingCert struct {
	CAPEM, CertPEM, KeyPEM []byte
}

// newServingCert makes a fresh CA and serving certificate.
func newServingCert() (servingCert, error) {
	var c servingCert
	var err error
	c.CAPEM, c.CertPEM, c.KeyPEM, err = controlplane.LoopbackCert("gpusched-e2e-kueue-ca", "kueue")
	if err != nil {
		return servingCert{}, fmt.Errorf("kueue: %w", err)
	}
	return c, nil
}

// writeTo writes tls.crt and tls.key (the names controller-runtime and
// Kueue look for) and ca.crt into dir, creating it.
func (s servingCert) writeTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"tls.crt": s.CertPEM, "tls.key": s.KeyPEM, "ca.crt": s.CAPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("kueue certificate: %w", err)
		}
	}
	return nil
}
