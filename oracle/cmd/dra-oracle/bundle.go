package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// invalidInput is reported with exit code 1.
type invalidInput struct{ msg string }

func (e invalidInput) Error() string { return e.msg }

func invalidf(format string, args ...any) error {
	return invalidInput{msg: fmt.Sprintf(format, args...)}
}

// claimEntry keeps a claim both typed (for the allocator) and as the raw JSON
// object it was given as, so that the output repeats the input unchanged
// apart from status.allocation.
type claimEntry struct {
	claim *resourceapi.ResourceClaim
	raw   map[string]any
}

// bundle is the content of one input file, every kind in input order.
type bundle struct {
	nodes   []*v1.Node
	slices  []*resourceapi.ResourceSlice
	classes []*resourceapi.DeviceClass
	claims  []claimEntry
}

type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// readDocuments splits a multi-document YAML or JSON stream into JSON
// documents. A top-level JSON/YAML array counts as a list of documents.
func readDocuments(r io.Reader) ([]json.RawMessage, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var docs []json.RawMessage
	for {
		var raw json.RawMessage
		err := decoder.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalidf("parse: %v", err)
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 || string(trimmed) == "null" {
			continue
		}
		if trimmed[0] == '[' {
			var items []json.RawMessage
			if err := json.Unmarshal(trimmed, &items); err != nil {
				return nil, invalidf("parse: %v", err)
			}
			docs = append(docs, items...)
			continue
		}
		docs = append(docs, trimmed)
	}
	return docs, nil
}

func loadBundleFile(path string) (*bundle, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		defer f.Close()
		r = f
	}
	docs, err := readDocuments(r)
	if err != nil {
		return nil, err
	}
	return parseBundle(docs)
}

func parseBundle(docs []json.RawMessage) (*bundle, error) {
	b := &bundle{}
	if err := b.add(docs, ""); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeStrict rejects unknown fields: a typo in a hand-written bundle would
// otherwise silently change the question asked of the allocator.
func decodeStrict(raw []byte, into any) error {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(into); err != nil {
		return err
	}
	return nil
}

func (b *bundle) add(docs []json.RawMessage, where string) error {
	for i, raw := range docs {
		path := fmt.Sprintf("%sdocument %d", where, i)
		var meta typeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			return invalidf("%s: %v", path, err)
		}
		want := "resource.k8s.io/v1"
		switch meta.Kind {
		case "List":
			if err := b.add(meta.Items, path+": items: "); err != nil {
				return err
			}
			continue
		case "Node":
			want = "v1"
		case "ResourceSlice", "DeviceClass", "ResourceClaim":
		case "":
			return invalidf("%s: kind: Required value", path)
		default:
			return invalidf("%s: kind: Unsupported value: %q: supported values: \"Node\", \"ResourceSlice\", \"DeviceClass\", \"ResourceClaim\", \"List\"", path, meta.Kind)
		}
		if meta.APIVersion != want {
			return invalidf("%s (%s): apiVersion: Unsupported value: %q: supported values: %q", path, meta.Kind, meta.APIVersion, want)
		}
		var err error
		switch meta.Kind {
		case "Node":
			obj := &v1.Node{}
			if err = decodeStrict(raw, obj); err == nil {
				b.nodes = append(b.nodes, obj)
			}
		case "ResourceSlice":
			obj := &resourceapi.ResourceSlice{}
			if err = decodeStrict(raw, obj); err == nil {
				b.slices = append(b.slices, obj)
			}
		case "DeviceClass":
			obj := &resourceapi.DeviceClass{}
			if err = decodeStrict(raw, obj); err == nil {
				b.classes = append(b.classes, obj)
			}
		case "ResourceClaim":
			obj := &resourceapi.ResourceClaim{}
			if err = decodeStrict(raw, obj); err == nil {
				var generic map[string]any
				decoder := json.NewDecoder(bytes.NewReader(raw))
				decoder.UseNumber()
				if err = decoder.Decode(&generic); err == nil {
					b.claims = append(b.claims, claimEntry{claim: obj, raw: generic})
				}
			}
		}
		if err != nil {
			return invalidf("%s (%s %s): %v", path, meta.Kind, objectName(raw), err)
		}
	}
	return nil
}

func objectName(raw []byte) string {
	var meta struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &meta)
	if meta.Metadata.Namespace != "" {
		return meta.Metadata.Namespace + "/" + meta.Metadata.Name
	}
	if meta.Metadata.Name == "" {
		return "<unnamed>"
	}
	return meta.Metadata.Name
}

// pickNode returns the node to allocate for: the one named, or the only one.
func (b *bundle) pickNode(name string) (*v1.Node, error) {
	if name != "" {
		for _, node := range b.nodes {
			if node.Name == name {
				return node, nil
			}
		}
		names := make([]string, 0, len(b.nodes))
		for _, node := range b.nodes {
			names = append(names, node.Name)
		}
		return nil, invalidf("node %q not found in the bundle (nodes: %s)", name, strings.Join(names, ", "))
	}
	switch len(b.nodes) {
	case 0:
		return nil, invalidf("the bundle has no Node object")
	case 1:
		return b.nodes[0], nil
	default:
		return nil, usagef("the bundle has %d nodes; choose one with --node", len(b.nodes))
	}
}
