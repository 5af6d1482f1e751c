package containerd

import (
	"context"
	"sort"
	"strings"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/distribution/reference"

	"podline.dev/services/kubelet/internal/runtime"
)

// normalize turns an image reference as a pod names it into containerd's
// name for it ("nginx" -> "docker.io/library/nginx:latest").
func normalize(ref string) string {
	named, err := reference.ParseDockerRef(ref)
	if err != nil {
		return ref
	}
	return named.String()
}

// imageID is what a container status reports: repository@digest.
func imageID(name, digest string) string {
	named, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return digest
	}
	return reference.TrimNamed(named).String() + "@" + digest
}

// PullImage pulls and unpacks ref; concurrent pulls of one ref share one.
func (r *Runtime) PullImage(ctx context.Context, ref string) (string, error) {
	name := normalize(ref)
	v, err, _ := r.pulls.Do(name, func() (any, error) {
		resolver := docker.NewResolver(docker.ResolverOptions{
			Hosts: config.ConfigureHosts(ctx, config.HostOptions{HostDir: config.HostDirFromRoot(r.hostsDir)}),
		})
		img, err := r.client.Pull(ctx, name,
			containerd.WithPullUnpack,
			containerd.WithResolver(resolver),
			containerd.WithPullSnapshotter(r.snapshotter),
		)
		if err != nil {
			return "", err
		}
		return imageID(img.Name(), img.Target().Digest.String()), nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// ensureImage returns the image, pulling it when it is absent.
func (r *Runtime) ensureImage(ctx context.Context, ref string) (containerd.Image, error) {
	img, err := r.client.GetImage(ctx, normalize(ref))
	if err == nil {
		return img, nil
	}
	if !isNotFound(err) {
		return nil, err
	}
	if _, err := r.PullImage(ctx, ref); err != nil {
		return nil, err
	}
	return r.client.GetImage(ctx, normalize(ref))
}

// ImageStatus reports an image that is present.
func (r *Runtime) ImageStatus(ctx context.Context, ref string) (*runtime.Image, error) {
	img, err := r.client.ImageService().Get(ctx, normalize(ref))
	if err != nil {
		return nil, notFound(err, "image "+ref)
	}
	size, _ := containerd.NewImage(r.client, img).Size(ctx)
	return &runtime.Image{
		ID:          img.Target.Digest.String(),
		RepoTags:    []string{img.Name},
		RepoDigests: []string{imageID(img.Name, img.Target.Digest.String())},
		Size:        size,
	}, nil
}

// ListImages lists the images present, one entry per digest.
func (r *Runtime) ListImages(ctx context.Context) ([]*runtime.Image, error) {
	imgs, err := r.client.ImageService().List(ctx)
	if err != nil {
		return nil, err
	}
	byDigest := map[string]*runtime.Image{}
	var order []string
	for _, img := range imgs {
		d := img.Target.Digest.String()
		out := byDigest[d]
		if out == nil {
			size, _ := containerd.NewImage(r.client, img).Size(ctx)
			out = &runtime.Image{ID: d, Size: size}
			byDigest[d] = out
			order = append(order, d)
		}
		addNames(out, img)
	}
	res := make([]*runtime.Image, 0, len(order))
	for _, d := range order {
		img := byDigest[d]
		sort.Strings(img.RepoTags)
		sort.Strings(img.RepoDigests)
		res = append(res, img)
	}
	return res, nil
}

func addNames(out *runtime.Image, img images.Image) {
	if strings.Contains(img.Name, "@") {
		out.RepoDigests = append(out.RepoDigests, img.Name)
		return
	}
	if strings.HasPrefix(img.Name, "sha256:") {
		return
	}
	out.RepoTags = append(out.RepoTags, img.Name)
	digestRef := imageID(img.Name, img.Target.Digest.String())
	for _, d := range out.RepoDigests {
		if d == digestRef {
			return
		}
	}
	out.RepoDigests = append(out.RepoDigests, digestRef)
}
