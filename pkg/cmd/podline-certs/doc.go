// Command podline-certs creates podline's certificates, keys and kubeconfigs
// (see package pki) and prints what it did with each file. It only creates
// what is missing or stale, so running it again changes nothing.
//
//	podline-certs [-dir .podline/pki] [-kubeconfig .podline/kubeconfig]
//	    [-kubeconfig-dir .podline/kubeconfigs] [-nodes control-plane,worker-1,worker-2]
package main
