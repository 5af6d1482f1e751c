// Package envvars builds the environment variables a container gets from
// the Services it can see, as the kubelet does for enableServiceLinks: for
// each Service with a cluster IP, {NAME}_SERVICE_HOST and
// {NAME}_SERVICE_PORT (and _PORT_{PORTNAME} per named port), and the
// Docker-link style {NAME}_PORT, {NAME}_PORT_{port}_{PROTO}, _PROTO, _PORT
// and _ADDR. The `kubernetes` Service of the default namespace is always
// seen; the Services of the pod's own namespace only when service links are
// enabled (the default). The container's own env comes after these, so it
// overrides them and may refer to them with $(VAR).
package envvars
