package server

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"time"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// podProxyPath matches the Pod subresources the apiserver relays to the
// Pod's kubelet: log (GET) and exec (a WebSocket upgrade, GET or POST).
var podProxyPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)/(log|exec)$`)

// kubeletPort is used when a Node does not report its kubelet's port.
const kubeletPort = 10250

// withPodProxy serves pods/log and pods/exec as kube-apiserver does: the
// request is authorized as that subresource (get for log, create for
// exec), the Pod's node is looked up, and the request goes on to the
// kubelet's /containerLogs or /exec with the same query (follow,
// tailLines, command, stdin, tty, ...). Everything else goes to next.
func (s *Server) withPodProxy(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := podProxyPath.FindStringSubmatch(r.URL.Path)
		if m == nil {
			next.ServeHTTP(w, r)
			return
		}
		namespace, name, sub := m[1], m[2], m[3]
		if err := s.authorizePodProxy(r, namespace, name, sub); err != nil {
			writeStatus(w, err)
			return
		}
		target, err := s.kubeletURL(r, namespace, name, sub)
		if err != nil {
			writeStatus(w, apierrors.FromError(err))
			return
		}
		proxy := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.Out.URL.Path, pr.Out.URL.RawPath = target.Path, ""
				pr.Out.URL.RawQuery = r.URL.RawQuery
				// The kubelet trusts the apiserver, not the user's credentials.
				pr.Out.Header.Del("Authorization")
			},
			Transport: kubeletTransport,
			// Streams (logs -f, exec) are written through as they come.
			FlushInterval: -1,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error dialing the kubelet of pod %s/%s: %v", namespace, name, err)))
			},
		}
		proxy.ServeHTTP(w, r)
	})
}

func (s *Server) authorizePodProxy(r *http.Request, namespace, name, sub string) *apierrors.StatusError {
	if s.auth == nil || s.auth.authorizer == nil {
		return nil
	}
	u, ok := request.UserFrom(r.Context())
	if !ok {
		return apierrors.NewUnauthorized("")
	}
	verb := "get"
	if sub == "exec" {
		verb = "create"
	}
	a := authz.Attributes{User: u, Verb: verb, ResourceRequest: true, Resource: "pods",
		Subresource: sub, Namespace: namespace, Name: name}
	if err := authz.Check(r.Context(), s.auth.authorizer, a); err != nil {
		return apierrors.FromError(err)
	}
	return nil
}

// kubeletURL is where the kubelet of the Pod's node serves sub for the
// requested container (the Pod's only container when it names none).
func (s *Server) kubeletURL(r *http.Request, namespace, name, sub string) (*url.URL, error) {
	obj, err := s.registries["pods"].Get(r.Context(), namespace, name)
	if err != nil {
		return nil, err
	}
	pod := obj.(*corev1.Pod)
	container := r.URL.Query().Get("container")
	if container == "" {
		cs := pod.GetSpec().GetContainers()
		if len(cs) != 1 {
			var names []string
			for _, c := range cs {
				names = append(names, c.GetName())
			}
			return nil, apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %v", name, names))
		}
		container = cs[0].GetName()
	}
	nodeName := pod.GetSpec().GetNodeName()
	if nodeName == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", name))
	}
	nobj, err := s.registries["nodes"].Get(r.Context(), "", nodeName)
	if err != nil {
		return nil, err
	}
	node := nobj.(*corev1.Node)
	host := ""
	for _, a := range node.GetStatus().GetAddresses() {
		if a.GetType() == "InternalIP" {
			host = a.GetAddress()
			break
		}
	}
	if host == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("node %s reports no InternalIP", nodeName))
	}
	port := int(node.GetStatus().GetDaemonEndpoints().GetKubeletEndpoint().GetPort())
	if port == 0 {
		port = kubeletPort
	}
	path := "/containerLogs/"
	if sub == "exec" {
		path = "/exec/"
	}
	return &url.URL{Scheme: "http", Host: net.JoinHostPort(host, strconv.Itoa(port)),
		Path: path + url.PathEscape(namespace) + "/" + url.PathEscape(name) + "/" + url.PathEscape(container)}, nil
}

// kubeletTransport reaches kubelets; a kubelet that does not accept the
// connection within 5 s gets the client a 503.
var kubeletTransport = &http.Transport{
	DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}
