// Package helper holds what several plugins share: score normalization,
// taint/toleration matching and node selector matching, each as
// Kubernetes' component-helpers define it.
package helper
