package test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
)

// testImage is an image the tests need, built here when docker has none.
type testImage struct {
	name string // containerd's name
	ref  string // what docker calls it
	// files are the image's contents: path in the image -> file on disk
	// ("->target" makes a symlink).
	files      map[string]string
	entrypoint []string
	user       string
}

// buildStatic builds a Go program into dir as a static binary.
func buildStatic(dir, pkg, out string) (string, error) {
	bin := filepath.Join(dir, out)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return bin, nil
}

func sha(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// ociArchive writes an OCI image layout tar with one uncompressed layer.
func ociArchive(img testImage) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, p := range []string{"bin", "tmp", "etc"} {
		mode := int64(0o755)
		if p == "tmp" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Name: p + "/", Typeflag: tar.TypeDir, Mode: mode, ModTime: epoch}); err != nil {
			return nil, err
		}
		dirs[p] = true
	}
	for path, src := range img.files {
		if target, ok := cutPrefix(src, "->"); ok {
			if err := tw.WriteHeader(&tar.Header{Name: path, Typeflag: tar.TypeSymlink, Linkname: target, Mode: 0o777, ModTime: epoch}); err != nil {
				return nil, err
			}
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Name: path, Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := layer.Bytes()
	cfg := map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": img.entrypoint, "Env": []string{"PATH=/bin"}, "User": img.user, "WorkingDir": "/"},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{sha(layerBytes)}},
	}
	cfgBytes, _ := json.Marshal(cfg)
	manifest := map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": sha(cfgBytes), "size": len(cfgBytes)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": sha(layerBytes), "size": len(layerBytes)}},
	}
	manBytes, _ := json.Marshal(manifest)
	index := map[string]any{
		"schemaVersion": 2,
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(manBytes), "size": len(manBytes),
			"platform":    map[string]string{"architecture": "amd64", "os": "linux"},
			"annotations": map[string]string{"io.containerd.image.name": img.name},
		}},
	}
	idxBytes, _ := json.Marshal(index)

	var out bytes.Buffer
	ow := tar.NewWriter(&out)
	add := func(name string, b []byte) error {
		if err := ow.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := ow.Write(b)
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", idxBytes},
		{"blobs/sha256/" + sha(layerBytes)[7:], layerBytes},
		{"blobs/sha256/" + sha(cfgBytes)[7:], cfgBytes},
		{"blobs/sha256/" + sha(manBytes)[7:], manBytes},
	} {
		if err := add(f.name, f.data); err != nil {
			return nil, err
		}
	}
	if err := ow.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// dockerSave returns `docker save` of ref when docker has it (and
// KUBELET_TEST_BUILD_IMAGES does not ask for the built images).
func dockerSave(ref string) ([]byte, bool) {
	if os.Getenv("KUBELET_TEST_BUILD_IMAGES") != "" {
		return nil, false
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, false
	}
	if exec.Command("docker", "image", "inspect", ref).Run() != nil {
		return nil, false
	}
	out, err := exec.Command("docker", "save", ref).Output()
	return out, err == nil
}

// importImages puts the pause and web images into containerd's k8s.io
// namespace: from docker when it has podline's images, else built here.
// It reports where each came from.
func importImages(ctx context.Context, c *containerd.Client, workDir string) ([]string, error) {
	built := map[string]string{}
	bin := func(pkg, name string) (string, error) {
		if p, ok := built[name]; ok {
			return p, nil
		}
		p, err := buildStatic(workDir, pkg, name)
		built[name] = p
		return p, err
	}
	type spec struct {
		img  testImage
		bins map[string]string // binary name -> package
	}
	specs := []spec{
		{testImage{name: "docker.io/podline/pause:3.10", ref: "podline/pause:3.10", entrypoint: []string{"/pause"}, user: "65535:65535",
			files: map[string]string{"pause": "pause"}},
			map[string]string{"pause": "podline.dev/services/kubelet/images/pause"}},
		{testImage{name: webImage, ref: webImage, entrypoint: []string{"/bin/web"}, files: map[string]string{
			"bin/web": "web", "bin/box": "box", "bin/true": "->box", "bin/false": "->box", "bin/sleep": "->box",
			"bin/cat": "->box", "bin/echo": "->box", "bin/touch": "->box", "bin/ls": "->box",
		}}, map[string]string{"web": "podline.dev/services/kubelet/images/web", "box": "podline.dev/services/kubelet/test/testdata/box"}},
	}
	var from []string
	for _, sp := range specs {
		img := sp.img
		data, ok := dockerSave(img.ref)
		source := "docker save " + img.ref
		if !ok {
			files := map[string]string{}
			for path, src := range img.files {
				if pkg, isBin := sp.bins[src]; isBin {
					p, err := bin(pkg, src)
					if err != nil {
						return nil, err
					}
					src = p
				}
				files[path] = src
			}
			img.files = files
			var err error
			if data, err = ociArchive(img); err != nil {
				return nil, err
			}
			source = "built " + img.name
		}
		imported, err := c.Import(ctx, bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", img.name, err)
		}
		for _, i := range imported {
			if err := containerd.NewImage(c, i).Unpack(ctx, "overlayfs"); err != nil {
				return nil, fmt.Errorf("unpack %s: %w", i.Name, err)
			}
		}
		from = append(from, source)
	}
	return from, nil
}
