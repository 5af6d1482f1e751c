// Package plugins wires every in-tree plugin into one registry, as
// kube-scheduler's framework/plugins/registry.go. Each plugin lives in its
// own folder with a Name constant, a New factory and its tests.
package plugins

import (
	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/plugins/balancedallocation"
	"podline.dev/services/scheduler/plugins/defaultbinder"
	"podline.dev/services/scheduler/plugins/defaultpreemption"
	"podline.dev/services/scheduler/plugins/imagelocality"
	"podline.dev/services/scheduler/plugins/interpodaffinity"
	"podline.dev/services/scheduler/plugins/nodeaffinity"
	"podline.dev/services/scheduler/plugins/nodename"
	"podline.dev/services/scheduler/plugins/nodeports"
	"podline.dev/services/scheduler/plugins/noderesourcesfit"
	"podline.dev/services/scheduler/plugins/nodeunschedulable"
	"podline.dev/services/scheduler/plugins/podtopologyspread"
	"podline.dev/services/scheduler/plugins/prioritysort"
	"podline.dev/services/scheduler/plugins/schedulinggates"
	"podline.dev/services/scheduler/plugins/tainttoleration"
)

// NewInTreeRegistry returns a registry with every plugin podline ships.
func NewInTreeRegistry() runtime.Registry {
	return runtime.Registry{
		prioritysort.Name:       prioritysort.New,
		schedulinggates.Name:    schedulinggates.New,
		nodename.Name:           nodename.New,
		nodeunschedulable.Name:  nodeunschedulable.New,
		nodeports.Name:          nodeports.New,
		noderesourcesfit.Name:   noderesourcesfit.New,
		balancedallocation.Name: balancedallocation.New,
		nodeaffinity.Name:       nodeaffinity.New,
		tainttoleration.Name:    tainttoleration.New,
		podtopologyspread.Name:  podtopologyspread.New,
		interpodaffinity.Name:   interpodaffinity.New,
		imagelocality.Name:      imagelocality.New,
		defaultpreemption.Name:  defaultpreemption.New,
		defaultbinder.Name:      defaultbinder.New,
	}
}
