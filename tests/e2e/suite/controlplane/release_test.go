package controlplane

import "testing"

func TestParseReleaseReadsKubeAPIServerVersion(t *testing.T) {
	r, err := parseRelease("Kubernetes v1.35.4\n")
	if err != nil || r.Major != 1 || r.Minor != 35 || r.Version != "v1.35.4" {
		t.Fatalf("parseRelease = %+v, %v; want 1.35 v1.35.4", r, err)
	}
	if !r.AtLeast(1, 35) || r.AtLeast(1, 36) || !r.AtLeast(0, 99) {
		t.Fatalf("%+v: AtLeast(1,35) true, (1,36) false, (0,99) true expected", r)
	}
}

func TestParseReleaseRefusesAnotherOutput(t *testing.T) {
	if r, err := parseRelease("kube-apiserver: unknown flag --version"); err == nil {
		t.Fatalf("parseRelease accepted an error message as %+v", r)
	}
}
