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
	"sort"
	"strings"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
)

// busyboxBinary is Debian's busybox-static.
const busyboxBinary = "/bin/busybox"

// imageFile is one file of a test image: data, or a symlink target.
type imageFile struct {
	data []byte
	link string
	mode int64
}

// testImage is an OCI image the tests build and import.
type testImage struct {
	name       string
	files      map[string]imageFile
	entrypoint []string
	cmd        []string
	user       string
}

// busyboxFiles are busybox and a link for each of its applets, with an
// /etc/passwd and /etc/group naming root, nobody and a user 1000.
func busyboxFiles() (map[string]imageFile, error) {
	data, err := os.ReadFile(busyboxBinary)
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(busyboxBinary, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %w", err)
	}
	files := map[string]imageFile{"bin/busybox": {data: data, mode: 0o755}}
	for _, applet := range strings.Fields(string(out)) {
		if applet != "busybox" {
			files["bin/"+applet] = imageFile{link: "busybox"}
		}
	}
	files["etc/passwd"] = imageFile{mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")}
	files["etc/group"] = imageFile{mode: 0o644, data: []byte("root:x:0:\nuser:x:1000:\nextra:x:3000:user\nnogroup:x:65534:\n")}
	return files, nil
}

func sha(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

// ociArchive writes an OCI image layout tar with one uncompressed layer.
func ociArchive(img testImage) ([]byte, error) {
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	epoch := time.Unix(0, 0)
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin", 0o755}, {"etc", 0o755}, {"tmp", 0o1777}, {"root", 0o700}, {"home", 0o755}, {"proc", 0o555}, {"sys", 0o555}, {"dev", 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Name: d.name + "/", Typeflag: tar.TypeDir, Mode: d.mode, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(img.files))
	for n := range img.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f := img.files[name]
		if f.link != "" {
			if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: f.link, Mode: 0o777, ModTime: epoch}); err != nil {
				return nil, err
			}
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := layer.Bytes()
	cfg := map[string]any{
		"architecture": "amd64", "os": "linux",
		"config": map[string]any{"Entrypoint": img.entrypoint, "Cmd": img.cmd, "Env": []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "User": img.user, "WorkingDir": "/"},
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
		if err := ow.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return nil, err
		}
		if _, err := ow.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := ow.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// buildPause builds podline's pause binary.
func buildPause(dir string) ([]byte, error) {
	bin := filepath.Join(dir, "pause")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "podline.dev/services/kubelet/images/pause")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build pause: %v\n%s", err, b)
	}
	return os.ReadFile(bin)
}

// importImage imports and unpacks one test image under each name.
func importImage(ctx context.Context, c *containerd.Client, img testImage, names ...string) error {
	for _, name := range append([]string{img.name}, names...) {
		img.name = name
		data, err := ociArchive(img)
		if err != nil {
			return err
		}
		imported, err := c.Import(ctx, bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("import %s: %w", name, err)
		}
		for _, i := range imported {
			if err := containerd.NewImage(c, i).Unpack(ctx, "overlayfs"); err != nil {
				return fmt.Errorf("unpack %s: %w", i.Name, err)
			}
		}
	}
	return nil
}

// importImages puts the pause and busybox images into the namespace.
func importImages(ctx context.Context, c *containerd.Client, dir string) error {
	pause, err := buildPause(dir)
	if err != nil {
		return err
	}
	if err := importImage(ctx, c, testImage{name: pauseImage, entrypoint: []string{"/pause"}, user: "65535:65535",
		files: map[string]imageFile{"pause": {data: pause, mode: 0o755}}}); err != nil {
		return err
	}
	files, err := busyboxFiles()
	if err != nil {
		return err
	}
	return importImage(ctx, c, testImage{name: busyboxImage, cmd: []string{"sh"}, files: files}, extraBusyboxNames...)
}

// extraBusyboxNames are more names of the busybox image (critest's).
var extraBusyboxNames []string
