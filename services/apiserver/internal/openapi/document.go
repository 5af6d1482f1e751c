package openapi

import (
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"podline.dev/proto/apis"
)

// Documents are the OpenAPI documents of the whole API, built once.
type Documents struct {
	// v3 maps a group-version path ("api/v1", "apis/apps/v1") to its document.
	v3     map[string][]byte
	hashes map[string]string
	index  []byte
	v2     []byte
}

type info struct {
	Title   string `json:"title"`
	Version string `json:"version"`
}

type v3Document struct {
	OpenAPI    string               `json:"openapi"`
	Info       info                 `json:"info"`
	Paths      map[string]*pathItem `json:"paths"`
	Components struct {
		Schemas map[string]*Schema `json:"schemas"`
	} `json:"components"`
}

type v2Document struct {
	Swagger     string               `json:"swagger"`
	Info        info                 `json:"info"`
	Paths       map[string]*pathItem `json:"paths"`
	Definitions map[string]*Schema   `json:"definitions"`
}

// Build generates the documents; version is the server's gitVersion.
func Build(version string) (*Documents, error) {
	d := &Documents{v3: map[string][]byte{}, hashes: map[string]string{}}
	inf := info{Title: "Kubernetes", Version: version}
	type entry struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	index := struct {
		Paths map[string]entry `json:"paths"`
	}{Paths: map[string]entry{}}
	v2 := &paths{b: newBuilder("#/definitions/", true), v2: true, m: map[string]*pathItem{}}
	for _, g := range apis.Groups {
		v3 := &paths{b: newBuilder("#/components/schemas/", false), m: map[string]*pathItem{}}
		for _, p := range []*paths{v3, v2} {
			if err := p.addGroup(g); err != nil {
				return nil, err
			}
		}
		doc := v3Document{OpenAPI: "3.0.0", Info: inf, Paths: v3.m}
		doc.Components.Schemas = v3.b.defs
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		key := strings.TrimPrefix(g.PathPrefix(), "/")
		d.v3[key] = b
		d.hashes[key] = fmt.Sprintf("%X", sha512.Sum512(b))
		index.Paths[key] = entry{ServerRelativeURL: "/openapi/v3/" + key + "?hash=" + d.hashes[key]}
	}
	var err error
	if d.index, err = json.Marshal(index); err != nil {
		return nil, err
	}
	d.v2, err = json.Marshal(v2Document{Swagger: "2.0", Info: inf, Paths: v2.m, Definitions: v2.b.defs})
	return d, err
}

// addGroup writes the paths of every resource in g and the definitions
// they refer to.
func (p *paths) addGroup(g apis.Group) error {
	status, err := message("podline.meta.v1.Status")
	if err != nil {
		return err
	}
	statusRef := p.b.ref(status)
	patchRef := p.b.named("io.k8s.apimachinery.pkg.apis.meta.v1.Patch", Schema{Type: "object",
		Description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body."})
	for _, r := range apis.InGroup(g) {
		kind, err := message(r.Message())
		if err != nil {
			return err
		}
		list, err := message(r.Message() + "List")
		if err != nil {
			return err
		}
		var scaleRef *Schema
		if r.Scale {
			scale, err := message("podline.autoscaling.v1.Scale")
			if err != nil {
				return err
			}
			scaleRef = p.b.ref(scale)
		}
		p.add(r, p.b.ref(kind), p.b.ref(list), statusRef, patchRef, scaleRef)
	}
	return nil
}

func message(name string) (protoreflect.MessageDescriptor, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("openapi: message %s: %w", name, err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("openapi: %s is not a message", name)
	}
	return md, nil
}

// V3Index is /openapi/v3: each group-version's path and document URL.
func (d *Documents) V3Index() []byte { return d.index }

// V3 is the document of a group-version path ("api/v1") and its hash.
func (d *Documents) V3(gv string) (doc []byte, hash string, ok bool) {
	doc, ok = d.v3[gv]
	return doc, d.hashes[gv], ok
}

// V2 is the Swagger 2.0 document of the whole API, as JSON.
func (d *Documents) V2() []byte { return d.v2 }
