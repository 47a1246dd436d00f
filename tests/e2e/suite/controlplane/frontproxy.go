package controlplane

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"path/filepath"
	"time"
)

// frontProxy is kube-apiserver's front proxy, as kubeadm sets it up: a CA
// of its own (--requestheader-client-ca-file) and the client certificate
// with CN front-proxy-client that the aggregator presents to aggregated
// API servers (--proxy-client-cert-file/--proxy-client-key-file).
type frontProxy struct {
	CAFile, ClientCert, ClientKey string
}

// FrontProxyClientName is the front proxy certificate's CN, and the only
// name in --requestheader-allowed-names.
const FrontProxyClientName = "front-proxy-client"

func newFrontProxy(dir string) (*frontProxy, error) {
	p := &frontProxy{
		CAFile:     filepath.Join(dir, "front-proxy-ca.crt"),
		ClientCert: filepath.Join(dir, "front-proxy-client.crt"),
		ClientKey:  filepath.Join(dir, "front-proxy-client.key"),
	}
	now := time.Now().Add(-time.Hour)
	ca, caKey, caDER, err := newCA("gpusched-e2e-front-proxy-ca", now)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	der, key, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: FrontProxyClientName},
		NotBefore:   now,
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, caKey)
	if err != nil {
		return nil, fmt.Errorf("front proxy client certificate: %w", err)
	}
	if err := writePEM(p.ClientCert, "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return p, writeKey(p.ClientKey, key)
}

// apiserverArgs are kubeadm's front proxy flags. No
// --enable-aggregator-routing: the visibility Service is an ExternalName
// to localhost, which the aggregator dials as is.
func (p *frontProxy) apiserverArgs() []string {
	return []string{
		"--requestheader-client-ca-file=" + p.CAFile,
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.ClientCert,
		"--proxy-client-key-file=" + p.ClientKey,
	}
}
