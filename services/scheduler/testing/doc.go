// Package testing has builders for the Pods and Nodes of scheduler tests,
// as kube-scheduler's testing/wrappers.go:
//
//	st.MakePod().Name("a").Req("500m", "64Mi").Priority(10).Obj()
//	st.MakeNode().Name("n1").Capacity("2", "4Gi").Label("topology.kubernetes.io/zone", "a").Obj()
//
// Import it as st.
package testing
