// Package profile reads the scheduler's configuration file, a subset of
// Kubernetes' KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1):
// profiles by schedulerName, the plugins enabled or disabled at each
// extension point (multiPoint enables a plugin at every point it
// implements), score weights, per-plugin args, percentageOfNodesToScore,
// parallelism and the pod backoff bounds. Without a file the scheduler runs Default(), one
// profile "default-scheduler" with Kubernetes' default plugins and weights.
//
//	apiVersion: kubescheduler.config.k8s.io/v1
//	kind: KubeSchedulerConfiguration
//	profiles:
//	  - schedulerName: default-scheduler
//	    plugins:
//	      multiPoint:
//	        disabled: [{name: "*"}]
//	        enabled:
//	          - {name: PrioritySort}
//	          - {name: NodeResourcesFit, weight: 1}
//	          - {name: TaintToleration, weight: 3}
//	          - {name: DefaultBinder}
//	    pluginConfig:
//	      - name: NodeResourcesFit
//	        args: {scoringStrategy: {type: MostAllocated}}
package profile
