// Package celdiff is the differential test of gpusched's CEL selector subset
// (scheduler/dra_selector.h) against upstream's
// k8s.io/dynamic-resource-allocation/cel: a seeded generator writes a corpus
// of (selector, device) pairs to tests/testdata/cel/corpus.json, upstream
// evaluates each pair as kube-scheduler v1.37.2 does, gpusched's
// gpusched_cel_verdicts evaluates the same file, and Compare says where
// they differ.
package celdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
)

// CorpusPath is the corpus, relative to the repository root.
const CorpusPath = "tests/testdata/cel/corpus.json"

// Device is one device as a ResourceSlice publishes it: attribute and
// capacity names without a domain are in Driver's domain.
type Device struct {
	Name       string                                                    `json:"name"`
	Driver     string                                                    `json:"driver"`
	Attributes map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes"`
	Capacity   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity"`
}

// Pair is one selector to evaluate on one device (by name).
type Pair struct {
	Selector string `json:"selector"`
	Device   string `json:"device"`
}

// Corpus is the file both sides read.
type Corpus struct {
	Note    string   `json:"note"`
	Seed    uint64   `json:"seed"`
	Devices []Device `json:"devices"`
	Pairs   []Pair   `json:"pairs"`
}

// DeviceByName indexes the corpus' devices.
func (c *Corpus) DeviceByName() map[string]*Device {
	out := make(map[string]*Device, len(c.Devices))
	for i := range c.Devices {
		out[c.Devices[i].Name] = &c.Devices[i]
	}
	return out
}

// Encode writes the corpus with one device and one pair per line, so that a change to the
// generator reads as a diff of pairs.
func (c *Corpus) Encode() ([]byte, error) {
	var buf bytes.Buffer
	header, err := json.Marshal(struct {
		Note string `json:"note"`
		Seed uint64 `json:"seed"`
	}{c.Note, c.Seed})
	if err != nil {
		return nil, err
	}
	buf.Write(header[:len(header)-1])
	buf.WriteString(",\n\"devices\": [\n")
	if err := writeLines(&buf, c.Devices); err != nil {
		return nil, err
	}
	buf.WriteString("],\n\"pairs\": [\n")
	if err := writeLines(&buf, c.Pairs); err != nil {
		return nil, err
	}
	buf.WriteString("]}\n")
	return buf.Bytes(), nil
}

// writeLines writes each item as JSON on a line of its own.
func writeLines[T any](buf *bytes.Buffer, items []T) error {
	for i, item := range items {
		var line bytes.Buffer
		encoder := json.NewEncoder(&line)
		encoder.SetEscapeHTML(false) // selectors read as written: && not \u0026\u0026
		if err := encoder.Encode(item); err != nil {
			return err
		}
		buf.Write(bytes.TrimSuffix(line.Bytes(), []byte("\n")))
		if i+1 < len(items) {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	return nil
}

// ReadCorpus reads and checks a corpus file: every pair names a device.
func ReadCorpus(path string) (*Corpus, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var corpus Corpus
	if err := json.Unmarshal(data, &corpus); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	devices := corpus.DeviceByName()
	for i, pair := range corpus.Pairs {
		if devices[pair.Device] == nil {
			return nil, nil, fmt.Errorf("%s: pairs[%d] names unknown device %q", path, i, pair.Device)
		}
	}
	return &corpus, data, nil
}
