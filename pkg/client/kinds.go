package client

import (
	"google.golang.org/grpc"

	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
)

// Typed constructors for every kind, as client-go's clientset offers.

func Pods(c grpc.ClientConnInterface) *Client[*corev1.Pod]   { return For[*corev1.Pod](c) }
func Nodes(c grpc.ClientConnInterface) *Client[*corev1.Node] { return For[*corev1.Node](c) }
func Namespaces(c grpc.ClientConnInterface) *Client[*corev1.Namespace] {
	return For[*corev1.Namespace](c)
}
func Services(c grpc.ClientConnInterface) *Client[*corev1.Service] { return For[*corev1.Service](c) }
func Endpoints(c grpc.ClientConnInterface) *Client[*corev1.Endpoints] {
	return For[*corev1.Endpoints](c)
}
func Events(c grpc.ClientConnInterface) *Client[*corev1.Event] { return For[*corev1.Event](c) }
func ConfigMaps(c grpc.ClientConnInterface) *Client[*corev1.ConfigMap] {
	return For[*corev1.ConfigMap](c)
}
func Secrets(c grpc.ClientConnInterface) *Client[*corev1.Secret] { return For[*corev1.Secret](c) }
func ServiceAccounts(c grpc.ClientConnInterface) *Client[*corev1.ServiceAccount] {
	return For[*corev1.ServiceAccount](c)
}
func Deployments(c grpc.ClientConnInterface) *Client[*appsv1.Deployment] {
	return For[*appsv1.Deployment](c)
}
func ReplicaSets(c grpc.ClientConnInterface) *Client[*appsv1.ReplicaSet] {
	return For[*appsv1.ReplicaSet](c)
}
func Leases(c grpc.ClientConnInterface) *Client[*coordinationv1.Lease] {
	return For[*coordinationv1.Lease](c)
}
func EndpointSlices(c grpc.ClientConnInterface) *Client[*discoveryv1.EndpointSlice] {
	return For[*discoveryv1.EndpointSlice](c)
}
func Roles(c grpc.ClientConnInterface) *Client[*rbacv1.Role] { return For[*rbacv1.Role](c) }
func ClusterRoles(c grpc.ClientConnInterface) *Client[*rbacv1.ClusterRole] {
	return For[*rbacv1.ClusterRole](c)
}
func RoleBindings(c grpc.ClientConnInterface) *Client[*rbacv1.RoleBinding] {
	return For[*rbacv1.RoleBinding](c)
}
func ClusterRoleBindings(c grpc.ClientConnInterface) *Client[*rbacv1.ClusterRoleBinding] {
	return For[*rbacv1.ClusterRoleBinding](c)
}
