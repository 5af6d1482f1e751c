package cri

import (
	"context"
	"fmt"

	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

func (r *Runtime) PullImage(ctx context.Context, ref string) (string, error) {
	resp, err := r.img.PullImage(ctx, &criv1.PullImageRequest{Image: &criv1.ImageSpec{Image: ref, UserSpecifiedImage: ref}})
	if err != nil {
		return "", wrap(err, "pull "+ref)
	}
	return resp.GetImageRef(), nil
}

func (r *Runtime) ImageStatus(ctx context.Context, ref string) (*runtime.Image, error) {
	resp, err := r.img.ImageStatus(ctx, &criv1.ImageStatusRequest{Image: &criv1.ImageSpec{Image: ref}})
	if err != nil {
		return nil, wrap(err, "image status "+ref)
	}
	if resp.GetImage() == nil {
		return nil, fmt.Errorf("image %s: %w", ref, runtime.ErrNotFound)
	}
	return fromImage(resp.GetImage()), nil
}

func (r *Runtime) ListImages(ctx context.Context) ([]*runtime.Image, error) {
	resp, err := r.img.ListImages(ctx, &criv1.ListImagesRequest{})
	if err != nil {
		return nil, wrap(err, "list images")
	}
	out := make([]*runtime.Image, 0, len(resp.GetImages()))
	for _, img := range resp.GetImages() {
		out = append(out, fromImage(img))
	}
	return out, nil
}

func fromImage(img *criv1.Image) *runtime.Image {
	return &runtime.Image{ID: img.GetId(), RepoTags: img.GetRepoTags(), RepoDigests: img.GetRepoDigests(), Size: int64(img.GetSize())}
}
