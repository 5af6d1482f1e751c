package testing

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/labels"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Verbs of recorded actions.
const (
	VerbGet          = "get"
	VerbList         = "list"
	VerbCreate       = "create"
	VerbUpdate       = "update"
	VerbUpdateStatus = "update-status"
	VerbDelete       = "delete"
)

var methodVerbs = map[string]string{
	"Get": VerbGet, "List": VerbList, "Create": VerbCreate, "Update": VerbUpdate,
	"UpdateStatus": VerbUpdateStatus, "Delete": VerbDelete,
}

// Action is one call the code under test made.
type Action struct {
	Verb string
	// Resource is the plural resource name ("pods", "replicasets").
	Resource  string
	Namespace string
	Name      string
	// Object is what was sent (create, update, update-status), as sent.
	Object object.Object
	// Options are the delete options, if any.
	Options *metav1.DeleteOptions
}

// String is "verb resource namespace/name" (name as sent: a generateName
// create shows the prefix).
func (a Action) String() string {
	name := a.Name
	if a.Verb == VerbCreate && name == "" && a.Object != nil {
		name = a.Object.GetMetadata().GetGenerateName() + "*"
	}
	key := object.KeyOf(a.Namespace, name)
	if key == "" {
		return a.Verb + " " + a.Resource
	}
	return a.Verb + " " + a.Resource + " " + key
}

// Reactor may fail a call: a non-nil error is returned to the caller
// (the call is still recorded, and changes nothing).
type Reactor func(a Action) error

// FakeConn is a grpc.ClientConnInterface that answers the typed client
// from an in-memory tracker and records every call. Create fills uid,
// resourceVersion, creationTimestamp and a generated name (suffixes are
// deterministic: bbbbb, bbbbc, ...); update and update-status honour a
// resourceVersion precondition and keep the other half of the object;
// delete honours finalizers and the propagation policy as the apiserver
// does. Watches are not served: unit tests fill the listers themselves.
type FakeConn struct {
	clock clock.Clock

	mu       sync.Mutex
	objects  map[string]map[string]object.Object // resource name -> key -> object
	actions  []Action
	reactors []Reactor
	rv       int64
	uid      int64
	names    int64
}

var _ grpc.ClientConnInterface = (*FakeConn)(nil)

// NewFakeConn returns an empty tracker whose timestamps come from clk.
func NewFakeConn(clk clock.Clock) *FakeConn {
	return &FakeConn{clock: clk, objects: map[string]map[string]object.Object{}}
}

// React adds a reactor, consulted for every later call.
func (c *FakeConn) React(r Reactor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reactors = append(c.reactors, r)
}

// FailOn fails every call of verb on resource with err.
func (c *FakeConn) FailOn(verb, resource string, err error) {
	c.React(func(a Action) error {
		if a.Verb == verb && a.Resource == resource {
			return err
		}
		return nil
	})
}

// Actions returns the calls recorded so far, in order.
func (c *FakeConn) Actions() []Action {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.actions)
}

// Writes returns the recorded calls other than get and list.
func (c *FakeConn) Writes() []Action {
	var out []Action
	for _, a := range c.Actions() {
		if a.Verb != VerbGet && a.Verb != VerbList {
			out = append(out, a)
		}
	}
	return out
}

// ClearActions forgets the recorded calls.
func (c *FakeConn) ClearActions() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.actions = nil
}

// Seed stores objects as they are (a missing resourceVersion or uid is
// filled), without recording an action.
func (c *FakeConn) Seed(objs ...object.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range objs {
		res := resourceOfObject(o)
		md := o.GetMetadata()
		if md.GetResourceVersion() == "" {
			md.ResourceVersion = c.nextRV()
		} else if n, err := strconv.ParseInt(md.GetResourceVersion(), 10, 64); err == nil && n > c.rv {
			c.rv = n
		}
		if md.GetUid() == "" {
			md.Uid = c.nextUID()
		}
		c.store(res.Name)[object.Key(o)] = object.Copy(o)
	}
}

// Remove deletes an object from the tracker without recording an action,
// as another client would.
func (c *FakeConn) Remove(resource, namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.objects[resource], object.KeyOf(namespace, name))
}

// Object returns the tracker's copy of an object, or nil.
func (c *FakeConn) Object(resource, namespace, name string) object.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.objects[resource][object.KeyOf(namespace, name)]
	if !ok {
		return nil
	}
	return object.Copy(o)
}

// Objects returns the tracker's objects of a resource, sorted by key.
func (c *FakeConn) Objects(resource string) []object.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.objects[resource]))
	for k := range c.objects[resource] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]object.Object, len(keys))
	for i, k := range keys {
		out[i] = object.Copy(c.objects[resource][k])
	}
	return out
}

func (c *FakeConn) store(resource string) map[string]object.Object {
	m, ok := c.objects[resource]
	if !ok {
		m = map[string]object.Object{}
		c.objects[resource] = m
	}
	return m
}

func (c *FakeConn) nextRV() string {
	c.rv++
	return strconv.FormatInt(c.rv, 10)
}

func (c *FakeConn) nextUID() string {
	c.uid++
	return fmt.Sprintf("uid-%d", c.uid)
}

// nextSuffix renders a counter in the alphabet of generated names.
func (c *FakeConn) nextSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	n := c.names
	c.names++
	b := []byte("bbbbb")
	for i := len(b) - 1; i >= 0 && n > 0; i-- {
		b[i] = alphabet[n%int64(len(alphabet))]
		n /= int64(len(alphabet))
	}
	return string(b)
}

// NewStream is not served.
func (c *FakeConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "FakeConn does not serve watches")
}

// Invoke serves one unary call of the typed client.
func (c *FakeConn) Invoke(_ context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	res, verb, err := parseMethod(method)
	if err != nil {
		return err
	}
	a := Action{Verb: verb, Resource: res.Name}
	switch req := args.(type) {
	case *metav1.GetRequest:
		a.Namespace, a.Name = req.GetNamespace(), req.GetName()
	case *metav1.ListRequest:
		a.Namespace = req.GetNamespace()
	case *metav1.DeleteRequest:
		a.Namespace, a.Name, a.Options = req.GetNamespace(), req.GetName(), req.GetOptions()
		if a.Options == nil && req.GetPropagationPolicy() != "" {
			a.Options = &metav1.DeleteOptions{PropagationPolicy: proto.String(req.GetPropagationPolicy())}
		}
	default:
		m := args.(proto.Message).ProtoReflect()
		fields := m.Descriptor().Fields()
		a.Namespace = m.Get(fields.ByName("namespace")).String()
		a.Name = m.Get(fields.ByName("name")).String()
		if fd := fields.ByName("object"); fd != nil && m.Has(fd) {
			a.Object = object.Copy(m.Get(fd).Message().Interface().(object.Object))
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.actions = append(c.actions, a)
	for _, r := range c.reactors {
		if err := r(a); err != nil {
			return toGRPC(err)
		}
	}
	out, err := c.serve(res, a, args)
	if err != nil {
		return toGRPC(err)
	}
	msg := reply.(proto.Message)
	proto.Reset(msg)
	proto.Merge(msg, out)
	return nil
}

func toGRPC(err error) error {
	se := apierrors.FromError(err)
	st := status.New(apierrors.GRPCCode(se.ErrStatus), se.Error())
	if withDetails, derr := st.WithDetails(se.ErrStatus); derr == nil {
		st = withDetails
	}
	return st.Err()
}

func parseMethod(method string) (apis.Resource, string, error) {
	parts := strings.Split(strings.TrimPrefix(method, "/"), "/")
	if len(parts) != 2 {
		return apis.Resource{}, "", status.Errorf(codes.Unimplemented, "bad method %q", method)
	}
	for _, r := range apis.Resources {
		if r.Group.Proto+"."+r.Service() == parts[0] {
			verb, ok := methodVerbs[parts[1]]
			if !ok {
				verb = strings.ToLower(parts[1])
			}
			return r, verb, nil
		}
	}
	return apis.Resource{}, "", status.Errorf(codes.Unimplemented, "unknown service %q", parts[0])
}

func resourceOfObject(o object.Object) apis.Resource {
	res, ok := apis.ByMessage(string(o.ProtoReflect().Descriptor().FullName()))
	if !ok {
		panic(fmt.Sprintf("testing: %T is not an API kind", o))
	}
	return res
}

func gr(res apis.Resource) apierrors.GroupResource {
	return apierrors.GroupResource{Group: res.Group.Name, Resource: res.Name}
}

func (c *FakeConn) serve(res apis.Resource, a Action, args any) (proto.Message, error) {
	objs := c.store(res.Name)
	key := object.KeyOf(a.Namespace, a.Name)
	switch a.Verb {
	case VerbGet:
		o, ok := objs[key]
		if !ok {
			return nil, apierrors.NewNotFound(gr(res), a.Name)
		}
		return object.Copy(o), nil
	case VerbList:
		return c.list(res, args.(*metav1.ListRequest))
	case VerbCreate:
		return c.create(res, a.Object)
	case VerbUpdate, VerbUpdateStatus:
		return c.update(res, key, a.Object, a.Verb == VerbUpdateStatus)
	case VerbDelete:
		return c.delete(res, key, a.Name, a.Options)
	}
	return &metav1.Status{Status: "Success"}, nil
}

func (c *FakeConn) list(res apis.Resource, req *metav1.ListRequest) (proto.Message, error) {
	sel := labels.Everything()
	if req.GetLabelSelector() != "" {
		var err error
		if sel, err = labels.Parse(req.GetLabelSelector()); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(res.Group.Proto + "." + res.Kind + "List"))
	if err != nil {
		return nil, err
	}
	l := mt.New()
	items := l.Mutable(l.Descriptor().Fields().ByName("items")).List()
	keys := make([]string, 0)
	for k := range c.store(res.Name) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		o := c.objects[res.Name][k]
		if req.GetNamespace() != "" && o.GetMetadata().GetNamespace() != req.GetNamespace() {
			continue
		}
		if !sel.Matches(o.GetMetadata().GetLabels()) {
			continue
		}
		items.Append(protoreflect.ValueOfMessage(object.Copy(o).ProtoReflect()))
	}
	l.Set(l.Descriptor().Fields().ByName("metadata"), protoreflect.ValueOfMessage((&metav1.ListMeta{ResourceVersion: strconv.FormatInt(c.rv, 10)}).ProtoReflect()))
	return l.Interface(), nil
}

func (c *FakeConn) create(res apis.Resource, obj object.Object) (proto.Message, error) {
	o := object.Copy(obj)
	md := o.GetMetadata()
	if md == nil {
		return nil, apierrors.NewBadRequest("no metadata")
	}
	if md.GetName() == "" && md.GetGenerateName() != "" {
		md.Name = md.GetGenerateName() + c.nextSuffix()
	}
	if md.GetName() == "" {
		return nil, apierrors.NewBadRequest("name or generateName is required")
	}
	if md.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	key := object.KeyOf(md.GetNamespace(), md.GetName())
	if _, exists := c.store(res.Name)[key]; exists {
		return nil, apierrors.NewAlreadyExists(gr(res), md.GetName())
	}
	md.Uid = c.nextUID()
	md.ResourceVersion = c.nextRV()
	md.CreationTimestamp = &metav1.Time{Seconds: c.clock.Now().Unix()}
	if fieldOf(o, "spec") != nil {
		md.Generation = 1
	}
	c.objects[res.Name][key] = o
	return object.Copy(o), nil
}

func (c *FakeConn) update(res apis.Resource, key string, obj object.Object, statusOnly bool) (proto.Message, error) {
	cur, ok := c.store(res.Name)[key]
	if !ok {
		return nil, apierrors.NewNotFound(gr(res), obj.GetMetadata().GetName())
	}
	next := object.Copy(obj)
	nmd, cmd := next.GetMetadata(), cur.GetMetadata()
	if rv := nmd.GetResourceVersion(); rv != "" && rv != cmd.GetResourceVersion() {
		return nil, apierrors.NewOptimisticLock(gr(res), nmd.GetName())
	}
	nmd.Uid, nmd.CreationTimestamp, nmd.DeletionTimestamp = cmd.Uid, cmd.CreationTimestamp, cmd.DeletionTimestamp
	nmd.Generation = cmd.Generation
	if statusOnly {
		copyField(next, cur, "spec")
		nmd.OwnerReferences, nmd.Finalizers = cmd.OwnerReferences, cmd.Finalizers
	} else {
		if res.Status {
			copyField(next, cur, "status")
		}
		if fd := fieldOf(next, "spec"); fd != nil && !proto.Equal(next.ProtoReflect().Get(fd).Message().Interface(), cur.ProtoReflect().Get(fd).Message().Interface()) {
			nmd.Generation++
		}
	}
	nmd.ResourceVersion = c.nextRV()
	if nmd.DeletionTimestamp != nil && len(nmd.Finalizers) == 0 {
		delete(c.objects[res.Name], key)
		return object.Copy(next), nil
	}
	c.objects[res.Name][key] = next
	return object.Copy(next), nil
}

func (c *FakeConn) delete(res apis.Resource, key, name string, opts *metav1.DeleteOptions) (proto.Message, error) {
	cur, ok := c.store(res.Name)[key]
	if !ok {
		return nil, apierrors.NewNotFound(gr(res), name)
	}
	if p := opts.GetPreconditions(); p != nil && p.Uid != nil && *p.Uid != cur.GetMetadata().GetUid() {
		return nil, apierrors.NewConflict(gr(res), name, "Precondition failed: UID in precondition: "+*p.Uid+", UID in object meta: "+cur.GetMetadata().GetUid())
	}
	next := object.Copy(cur)
	md := next.GetMetadata()
	switch opts.GetPropagationPolicy() {
	case "Orphan":
		if !slices.Contains(md.Finalizers, "orphan") {
			md.Finalizers = append(md.Finalizers, "orphan")
		}
	case "Foreground":
		if !slices.Contains(md.Finalizers, "foregroundDeletion") {
			md.Finalizers = append(md.Finalizers, "foregroundDeletion")
		}
	}
	if len(md.Finalizers) == 0 {
		delete(c.objects[res.Name], key)
		return next, nil
	}
	if md.DeletionTimestamp == nil {
		md.DeletionTimestamp = &metav1.Time{Seconds: c.clock.Now().Unix()}
		md.DeletionGracePeriodSeconds = proto.Int64(0)
	}
	md.ResourceVersion = c.nextRV()
	c.objects[res.Name][key] = next
	return object.Copy(next), nil
}

func fieldOf(o proto.Message, name protoreflect.Name) protoreflect.FieldDescriptor {
	return o.ProtoReflect().Descriptor().Fields().ByName(name)
}

func copyField(dst, src proto.Message, name protoreflect.Name) {
	fd := fieldOf(dst, name)
	if fd == nil {
		return
	}
	if !src.ProtoReflect().Has(fd) {
		dst.ProtoReflect().Clear(fd)
		return
	}
	v := src.ProtoReflect().Get(fd)
	if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
		v = protoreflect.ValueOfMessage(proto.Clone(v.Message().Interface()).ProtoReflect())
	}
	dst.ProtoReflect().Set(fd, v)
}
