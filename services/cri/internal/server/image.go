package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/containerd/v2/core/remotes/docker/config"
	"github.com/distribution/reference"
	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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

// imageRef is what a container status reports: repository@digest.
func imageRef(name, digest string) string {
	named, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return digest
	}
	return reference.TrimNamed(named).String() + "@" + digest
}

// localImage finds an image that is present by name, repo@digest or
// image ID (its config digest, or a prefix of it).
func (s *Service) localImage(ctx context.Context, ref string) (containerd.Image, error) {
	if ref == "" {
		return nil, fmt.Errorf("no image given: %w", ErrInvalid)
	}
	img, err := s.client.GetImage(ctx, normalize(ref))
	if err == nil {
		return img, nil
	}
	if !isNotFound(err) {
		return nil, err
	}
	id := strings.TrimPrefix(ref, "sha256:")
	if len(id) >= 12 && !strings.ContainsAny(id, "/:") {
		list, err := s.client.ListImages(ctx)
		if err != nil {
			return nil, err
		}
		for _, i := range list {
			cd, err := i.Config(ctx)
			if err == nil && strings.HasPrefix(cd.Digest.Encoded(), id) {
				return i, nil
			}
		}
	}
	return nil, notFoundf("image %q", ref)
}

// ensureImage returns the image, pulling it when it is absent.
func (s *Service) ensureImage(ctx context.Context, ref string) (containerd.Image, error) {
	img, err := s.localImage(ctx, ref)
	if err == nil {
		return img, nil
	}
	if !isNotFound(err) {
		return nil, err
	}
	if _, err := s.pull(ctx, ref, nil); err != nil {
		return nil, err
	}
	return s.localImage(ctx, ref)
}

// PullImage pulls and unpacks an image with the node's registry hosts
// configuration; concurrent pulls of one image share one.
func (s *Service) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref, err := s.pull(s.ctx(ctx), req.GetImage().GetImage(), req.GetAuth())
	if err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.PullImageResponse{ImageRef: ref}, nil
}

func (s *Service) pull(ctx context.Context, ref string, auth *runtimeapi.AuthConfig) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("no image given: %w", ErrInvalid)
	}
	name := normalize(ref)
	v, err, _ := s.pulls.Do(name, func() (any, error) {
		opts := config.HostOptions{HostDir: config.HostDirFromRoot(s.hostsDir)}
		if auth.GetUsername() != "" || auth.GetPassword() != "" {
			opts.Credentials = func(string) (string, string, error) { return auth.GetUsername(), auth.GetPassword(), nil }
		}
		resolver := docker.NewResolver(docker.ResolverOptions{Hosts: config.ConfigureHosts(ctx, opts)})
		img, err := s.client.Pull(ctx, name,
			containerd.WithPullUnpack,
			containerd.WithResolver(resolver),
			containerd.WithPullSnapshotter(s.snapshotter),
		)
		if err != nil {
			return "", fmt.Errorf("pull %s: %w", ref, err)
		}
		cd, err := img.Config(ctx)
		if err != nil {
			return "", err
		}
		return cd.Digest.String(), nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// criImage describes every containerd image of one config digest.
func (s *Service) criImage(ctx context.Context, imgs []images.Image) (*runtimeapi.Image, error) {
	first := containerd.NewImage(s.client, imgs[0])
	cd, err := first.Config(ctx)
	if err != nil {
		return nil, err
	}
	out := &runtimeapi.Image{Id: cd.Digest.String()}
	if size, err := first.Size(ctx); err == nil {
		out.Size = uint64(size)
	}
	if spec, err := first.Spec(ctx); err == nil {
		user := spec.Config.User
		if u, _, _ := strings.Cut(user, ":"); u != "" {
			var uid int64
			if _, err := fmt.Sscan(u, &uid); err == nil {
				out.Uid = &runtimeapi.Int64Value{Value: uid}
			} else {
				out.Username = u
			}
		}
	}
	seen := map[string]bool{}
	for _, img := range imgs {
		switch {
		case strings.Contains(img.Name, "@"):
			if !seen[img.Name] {
				out.RepoDigests = append(out.RepoDigests, img.Name)
				seen[img.Name] = true
			}
		case strings.HasPrefix(img.Name, "sha256:"):
		default:
			out.RepoTags = append(out.RepoTags, img.Name)
			if d := imageRef(img.Name, img.Target.Digest.String()); !seen[d] {
				out.RepoDigests = append(out.RepoDigests, d)
				seen[d] = true
			}
		}
	}
	sort.Strings(out.RepoTags)
	sort.Strings(out.RepoDigests)
	out.Pinned = s.isPinned(out)
	return out, nil
}

// isPinned: the pause image is never garbage-collected by the kubelet.
func (s *Service) isPinned(img *runtimeapi.Image) bool {
	pause := normalize(s.sandboxImage)
	for _, t := range img.RepoTags {
		if t == pause {
			return true
		}
	}
	return false
}

// imagesByID groups containerd's images by config digest.
func (s *Service) imagesByID(ctx context.Context) (map[string][]images.Image, []string, error) {
	list, err := s.client.ImageService().List(ctx)
	if err != nil {
		return nil, nil, err
	}
	by := map[string][]images.Image{}
	var order []string
	for _, img := range list {
		cd, err := containerd.NewImage(s.client, img).Config(ctx)
		if err != nil {
			continue // content missing (a pull under way)
		}
		id := cd.Digest.String()
		if _, ok := by[id]; !ok {
			order = append(order, id)
		}
		by[id] = append(by[id], img)
	}
	return by, order, nil
}

// ImageStatus reports a present image, or nil when it is absent.
func (s *Service) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ctx = s.ctx(ctx)
	img, err := s.localImage(ctx, req.GetImage().GetImage())
	if err != nil {
		if isNotFound(err) {
			return &runtimeapi.ImageStatusResponse{}, nil
		}
		return nil, toGRPC(err)
	}
	cd, err := img.Config(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	by, _, err := s.imagesByID(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	group := by[cd.Digest.String()]
	if len(group) == 0 {
		group = []images.Image{img.Metadata()}
	}
	out, err := s.criImage(ctx, group)
	if err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.ImageStatusResponse{Image: out}, nil
}

// ListImages lists the images present, one entry per image ID.
func (s *Service) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	ctx = s.ctx(ctx)
	by, order, err := s.imagesByID(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	want := req.GetFilter().GetImage().GetImage()
	var wantID string
	if want != "" {
		img, err := s.localImage(ctx, want)
		if err != nil {
			return &runtimeapi.ListImagesResponse{}, nil
		}
		cd, err := img.Config(ctx)
		if err != nil {
			return nil, toGRPC(err)
		}
		wantID = cd.Digest.String()
	}
	resp := &runtimeapi.ListImagesResponse{}
	for _, id := range order {
		if wantID != "" && id != wantID {
			continue
		}
		img, err := s.criImage(ctx, by[id])
		if err != nil {
			continue
		}
		resp.Images = append(resp.Images, img)
	}
	return resp, nil
}

// RemoveImage deletes every name of an image; an absent image is removed.
func (s *Service) RemoveImage(ctx context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	ctx = s.ctx(ctx)
	img, err := s.localImage(ctx, req.GetImage().GetImage())
	if err != nil {
		if isNotFound(err) {
			return &runtimeapi.RemoveImageResponse{}, nil
		}
		return nil, toGRPC(err)
	}
	cd, err := img.Config(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	by, _, err := s.imagesByID(ctx)
	if err != nil {
		return nil, toGRPC(err)
	}
	group := by[cd.Digest.String()]
	for i, m := range group {
		var opts []images.DeleteOpt
		if i == len(group)-1 {
			opts = append(opts, images.SynchronousDelete())
		}
		if err := s.client.ImageService().Delete(ctx, m.Name, opts...); err != nil && !isNotFound(err) {
			return nil, toGRPC(fmt.Errorf("remove image %s: %w", m.Name, err))
		}
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports the filesystem the snapshotter keeps images on.
func (s *Service) ImageFsInfo(ctx context.Context, _ *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	fs, err := fsUsage(s.imageFsDir)
	if err != nil {
		return nil, toGRPC(err)
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{fs}, ContainerFilesystems: []*runtimeapi.FilesystemUsage{fs}}, nil
}

// fsUsage is statfs of the filesystem holding dir.
func fsUsage(dir string) (*runtimeapi.FilesystemUsage, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", dir, err)
	}
	used := (st.Blocks - st.Bfree) * uint64(st.Bsize)
	return &runtimeapi.FilesystemUsage{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: dir},
		UsedBytes:  &runtimeapi.UInt64Value{Value: used},
		InodesUsed: &runtimeapi.UInt64Value{Value: st.Files - st.Ffree},
	}, nil
}
