package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestBinDirFromScriptTakesTheLastLine(t *testing.T) {
	repo := t.TempDir()
	script := filepath.Join(repo, "tests", "e2e", "build-binaries.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "#!/usr/bin/env bash\necho building >&2\necho progress\necho /cache/bin\n"
	if err := os.WriteFile(script, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := binDirFromScript(repo)
	if err != nil || dir != "/cache/bin" {
		t.Fatalf("binDirFromScript = %q, %v; want /cache/bin", dir, err)
	}
}

// The fixture changes only the kubeconfig, leader election and the
// extender's URL of the shipped configuration.
func TestSchedulerConfigRewritesOnlyLoopbackSettings(t *testing.T) {
	repo, err := RepoRoot()
	if err != nil {
		t.Skip(err)
	}
	shipped := decodeYAML(t, filepath.Join(repo, "deploy", "kube-scheduler-config.yaml"))
	out, err := schedulerConfig(repo, "/tmp/k.kubeconfig", 4242, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if v := got["clientConnection"].(map[string]any)["kubeconfig"]; v != "/tmp/k.kubeconfig" {
		t.Errorf("kubeconfig = %v", v)
	}
	if v := got["leaderElection"].(map[string]any)["leaderElect"]; v != false {
		t.Errorf("leaderElect = %v", v)
	}
	extender := got["extenders"].([]any)[0].(map[string]any)
	if v := extender["urlPrefix"]; v != "http://127.0.0.1:4242" {
		t.Errorf("urlPrefix = %v", v)
	}
	// Put the three back: the rest must equal what deploy/ ships.
	got["clientConnection"].(map[string]any)["kubeconfig"] = shipped["clientConnection"].(map[string]any)["kubeconfig"]
	got["leaderElection"].(map[string]any)["leaderElect"] = shipped["leaderElection"].(map[string]any)["leaderElect"]
	extender["urlPrefix"] = shipped["extenders"].([]any)[0].(map[string]any)["urlPrefix"]
	a, _ := yaml.Marshal(got)
	b, _ := yaml.Marshal(shipped)
	if string(a) != string(b) {
		t.Errorf("other fields changed:\n%s\nwant\n%s", a, b)
	}
}

func decodeYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDecodeObjectsExpandsLists(t *testing.T) {
	text := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a}
- apiVersion: v1
  kind: Node
  metadata: {name: b}
---
# only a comment
---
apiVersion: v1
kind: Namespace
metadata: {name: c}
`
	objs, err := DecodeObjects(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	if got := strings.Join(names, " "); got != "Node/a Node/b Namespace/c" {
		t.Fatalf("decoded %s", got)
	}
}
