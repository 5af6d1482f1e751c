package server

import (
	"crypto/tls"
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
// Pod's kubelet: log (GET), exec (a WebSocket upgrade, GET or POST) and
// portforward (an SPDY upgrade, POST, or kubectl's WebSocket tunnel, GET).
var podProxyPath = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/pods/([^/]+)/(log|exec|portforward)$`)

// kubeletPort is used when a Node does not report its kubelet's port.
const kubeletPort = 10250

// KubeletConfig is how the apiserver reaches kubelets.
type KubeletConfig struct {
	// TLS is the client side of the connection: the apiserver's kubelet
	// client certificate (--kubelet-client-certificate, --kubelet-client-key)
	// and the CA that verifies the kubelets' serving certificates
	// (--kubelet-certificate-authority). Nil, or without RootCAs, the
	// serving certificate is not verified, as kube-apiserver does without
	// --kubelet-certificate-authority.
	TLS *tls.Config
	// PreferredAddressTypes are the Node address types tried in order for
	// the kubelet's host (--kubelet-preferred-address-types); empty is
	// DefaultKubeletAddressTypes.
	PreferredAddressTypes []string
}

// DefaultKubeletAddressTypes is kube-apiserver's default order. Hostname
// comes first: the kubelets' serving certificates name their node, while
// an InternalIP may be assigned when the node starts.
var DefaultKubeletAddressTypes = []string{"Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"}

// withPodProxy serves pods/log, pods/exec and pods/portforward as
// kube-apiserver does: the request is authorized as that subresource (get
// for log, create for exec and portforward), the Pod's node is looked up,
// and the request goes on over HTTPS to the kubelet's /containerLogs,
// /exec or /portForward with the same query (follow, tailLines, command,
// stdin, tty, ...), as the apiserver's own kubelet client identity.
// Upgrades (exec's WebSocket, port-forward's SPDY) pass through as bytes
// once the kubelet has switched protocols; kubectl's WebSocket tunnel of
// port-forward's SPDY is translated (tunnelPortForward). Everything else
// goes to next.
func (s *Server) withPodProxy(next http.Handler) http.Handler {
	transport := kubeletTransport(s.cfg.Kubelet.TLS)
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
		if sub == "portforward" && isSPDYTunnel(r) {
			s.tunnelPortForward(w, r, target, transport, namespace, name)
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
			Transport: transport,
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
	if sub == "exec" || sub == "portforward" {
		verb = "create"
	}
	a := authz.Attributes{User: u, Verb: verb, ResourceRequest: true, Resource: "pods",
		Subresource: sub, Namespace: namespace, Name: name}
	if err := authz.Check(r.Context(), s.auth.authorizer, a); err != nil {
		return apierrors.FromError(err)
	}
	return nil
}

// kubeletURL is where the kubelet of the Pod's node serves sub: for log
// and exec of the requested container (the Pod's only container when it
// names none), for portforward of the Pod.
func (s *Server) kubeletURL(r *http.Request, namespace, name, sub string) (*url.URL, error) {
	obj, err := s.registries["pods"].Get(r.Context(), namespace, name)
	if err != nil {
		return nil, err
	}
	pod := obj.(*corev1.Pod)
	container := r.URL.Query().Get("container")
	if container == "" && sub != "portforward" {
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
	types := s.cfg.Kubelet.PreferredAddressTypes
	if len(types) == 0 {
		types = DefaultKubeletAddressTypes
	}
	host := nodeAddress(node, types)
	if host == "" {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("no preferred addresses found; known addresses: %v", addresses(node)))
	}
	port := int(node.GetStatus().GetDaemonEndpoints().GetKubeletEndpoint().GetPort())
	if port == 0 {
		port = kubeletPort
	}
	hostPort := net.JoinHostPort(host, strconv.Itoa(port))
	podPath := url.PathEscape(namespace) + "/" + url.PathEscape(name)
	switch sub {
	case "portforward":
		return &url.URL{Scheme: "https", Host: hostPort, Path: "/portForward/" + podPath}, nil
	case "exec":
		return &url.URL{Scheme: "https", Host: hostPort, Path: "/exec/" + podPath + "/" + url.PathEscape(container)}, nil
	}
	return &url.URL{Scheme: "https", Host: hostPort, Path: "/containerLogs/" + podPath + "/" + url.PathEscape(container)}, nil
}

// nodeAddress is the node's first address of the first type in types that
// it reports.
func nodeAddress(node *corev1.Node, types []string) string {
	for _, t := range types {
		for _, a := range node.GetStatus().GetAddresses() {
			if a.GetType() == t && a.GetAddress() != "" {
				return a.GetAddress()
			}
		}
	}
	return ""
}

// addresses lists a node's addresses as "Type:address" for an error.
func addresses(node *corev1.Node) []string {
	var out []string
	for _, a := range node.GetStatus().GetAddresses() {
		out = append(out, a.GetType()+":"+a.GetAddress())
	}
	return out
}

// kubeletTransport reaches kubelets over TLS with cfg; a kubelet that does
// not accept the connection within 5 s gets the client a 503. The
// transport speaks HTTP/1.1 only, which exec's WebSocket upgrade needs.
func kubeletTransport(cfg *tls.Config) *http.Transport {
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	cfg = cfg.Clone()
	if cfg.RootCAs == nil {
		cfg.InsecureSkipVerify = true
	}
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:     cfg,
		TLSHandshakeTimeout: 5 * time.Second,
	}
}
