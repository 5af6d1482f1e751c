package proxier

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
)

// serviceIndex indexes EndpointSlices by their Service's namespace/name.
const serviceIndex = "service"

// Informers are the proxy's two watches, Services and EndpointSlices of
// every namespace, as a Source.
type Informers struct {
	services, slices cache.SharedIndexInformer
}

var _ Source = (*Informers)(nil)

// NewInformers watches Services and EndpointSlices through conn.
func NewInformers(conn grpc.ClientConnInterface, log *slog.Logger) *Informers {
	return &Informers{
		services: cache.NewSharedIndexInformer(&client.ListWatch[*corev1.Service]{Client: client.Services(conn)},
			&corev1.Service{}, cache.WithInformerLogger(log)),
		slices: cache.NewSharedIndexInformer(&client.ListWatch[*discoveryv1.EndpointSlice]{Client: client.EndpointSlices(conn)},
			&discoveryv1.EndpointSlice{}, cache.WithInformerLogger(log),
			cache.WithIndexers(cache.Indexers{serviceIndex: func(o object.Object) ([]string, error) {
				if sl, ok := o.(*discoveryv1.EndpointSlice); ok {
					if k := SliceServiceKey(sl); k != "" {
						return []string{k}, nil
					}
				}
				return nil, nil
			}})),
	}
}

// Notify tells p about every change: handlers only mark Services dirty.
func (in *Informers) Notify(p *Proxier) error {
	svc := func(o object.Object) { p.ServiceChanged(object.Key(o)) }
	if _, err := in.services.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    svc,
		UpdateFunc: func(_, o object.Object) { svc(o) },
		DeleteFunc: func(o object.Object) {
			if s, ok := cache.As[*corev1.Service](o); ok {
				svc(s)
			}
		},
	}); err != nil {
		return err
	}
	sl := func(o object.Object) {
		if s, ok := cache.As[*discoveryv1.EndpointSlice](o); ok {
			p.SliceChanged(s)
		}
	}
	_, err := in.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    sl,
		UpdateFunc: func(_, o object.Object) { sl(o) },
		DeleteFunc: sl,
	})
	return err
}

// Run runs both informers until ctx is done.
func (in *Informers) Run(ctx context.Context) {
	go in.services.Run(ctx)
	in.slices.Run(ctx)
}

// WaitForCacheSync waits for both informers' first lists.
func (in *Informers) WaitForCacheSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx, in.services.HasSynced, in.slices.HasSynced)
}

func (in *Informers) Services() []*corev1.Service {
	objs := in.services.GetIndexer().List()
	out := make([]*corev1.Service, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*corev1.Service); ok {
			out = append(out, s)
		}
	}
	return out
}

func (in *Informers) Service(key string) (*corev1.Service, bool) {
	o, ok, err := in.services.GetIndexer().GetByKey(key)
	if err != nil || !ok {
		return nil, false
	}
	s, ok := o.(*corev1.Service)
	return s, ok
}

func (in *Informers) Slices(key string) []*discoveryv1.EndpointSlice {
	objs, err := in.slices.GetIndexer().ByIndex(serviceIndex, key)
	if err != nil {
		return nil
	}
	out := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			out = append(out, s)
		}
	}
	return out
}
