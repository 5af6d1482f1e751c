package plugins

import (
	"context"
	"slices"
	"testing"

	"podline.dev/services/scheduler/internal/framework/runtime"
	"podline.dev/services/scheduler/internal/profile"
)

func TestDefaultProfileBuildsEveryExtensionPoint(t *testing.T) {
	cfg := profile.Default()
	fw, err := runtime.NewFramework(context.Background(), NewInTreeRegistry(), &cfg.Profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	got := fw.ListPlugins()
	want := map[string][]string{
		"PreEnqueue": {"SchedulingGates"},
		"QueueSort":  {"PrioritySort"},
		"PreFilter":  {"NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"},
		"Filter":     {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"},
		"PostFilter": {"DefaultPreemption"},
		"PreScore":   {"TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"},
		"Score": {"TaintToleration(3)", "NodeAffinity(2)", "NodeResourcesFit(1)", "PodTopologySpread(2)", "InterPodAffinity(2)",
			"NodeResourcesBalancedAllocation(1)", "ImageLocality(1)"},
		"Bind": {"DefaultBinder"},
	}
	for point, names := range want {
		if !slices.Equal(got[point], names) {
			t.Errorf("%s = %v, want %v", point, got[point], names)
		}
	}
}

func TestProfileFileSelectsPluginsAndWeights(t *testing.T) {
	cfg, err := profile.Parse([]byte(`
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
  - schedulerName: default-scheduler
    plugins:
      multiPoint:
        disabled: [{name: "*"}]
        enabled:
          - {name: PrioritySort}
          - {name: NodeResourcesFit, weight: 4}
          - {name: TaintToleration}
          - {name: DefaultBinder}
      score:
        disabled: [{name: TaintToleration}]
    pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}
  - schedulerName: bin-packer
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Profiles) != 2 || *cfg.Profiles[0].PercentageOfNodesToScore != 50 {
		t.Fatalf("profiles = %+v", cfg.Profiles)
	}
	fw, err := runtime.NewFramework(context.Background(), NewInTreeRegistry(), &cfg.Profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	got := fw.ListPlugins()
	if !slices.Equal(got["Filter"], []string{"NodeResourcesFit", "TaintToleration"}) {
		t.Errorf("Filter = %v", got["Filter"])
	}
	if !slices.Equal(got["Score"], []string{"NodeResourcesFit(4)"}) {
		t.Errorf("Score = %v", got["Score"])
	}
	if len(got["PostFilter"]) != 0 {
		t.Errorf("PostFilter = %v", got["PostFilter"])
	}
}

func TestProfileFileErrors(t *testing.T) {
	for name, text := range map[string]string{
		"unknown field":   "profiles: [{schedulerName: a, plugin: {}}]",
		"wrong kind":      "kind: Deployment",
		"bad percentage":  "percentageOfNodesToScore: 120",
		"duplicate names": "profiles: [{schedulerName: a}, {schedulerName: a}]",
	} {
		if _, err := profile.Parse([]byte(text)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cfg, _ := profile.Parse([]byte(`profiles: [{plugins: {multiPoint: {enabled: [{name: NoSuchPlugin}]}}}]`))
	if _, err := runtime.NewFramework(context.Background(), NewInTreeRegistry(), &cfg.Profiles[0]); err == nil {
		t.Error("unknown plugin: no error")
	}
}
