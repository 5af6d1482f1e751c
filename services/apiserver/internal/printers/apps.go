package printers

import (
	"fmt"
	"strings"
	"time"

	"podline.dev/pkg/labels"
	appsv1 "podline.dev/proto/apps/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

var (
	containersColumn = Column{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	imagesColumn     = Column{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
	selectorColumn   = Column{Name: "Selector", Type: "string", Priority: 1, Description: "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."}
)

func init() {
	register(&appsv1.Deployment{}, handler{columns: []Column{
		nameColumn,
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "string", Description: "Total number of non-terminated pods targeted by this deployment that have the desired template spec."},
		{Name: "Available", Type: "string", Description: "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."},
		ageColumn, containersColumn, imagesColumn, selectorColumn,
	}, row: rowFunc(func(d *appsv1.Deployment, now time.Time) []any {
		st := d.GetStatus()
		names, images := containerNames(d.GetSpec().GetTemplate())
		return []any{
			d.GetMetadata().GetName(), fmt.Sprintf("%d/%d", st.GetReadyReplicas(), replicas(d.GetSpec().Replicas)),
			int64(st.GetUpdatedReplicas()), int64(st.GetAvailableReplicas()), since(d.GetMetadata().GetCreationTimestamp(), now),
			names, images, selectorString(d.GetSpec().GetSelector()),
		}
	})})
	register(&appsv1.ReplicaSet{}, handler{columns: []Column{
		nameColumn,
		{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired pods."},
		{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of replicas."},
		{Name: "Ready", Type: "integer", Description: "The number of ready replicas for this replica set."},
		ageColumn, containersColumn, imagesColumn, selectorColumn,
	}, row: rowFunc(func(rs *appsv1.ReplicaSet, now time.Time) []any {
		st := rs.GetStatus()
		names, images := containerNames(rs.GetSpec().GetTemplate())
		return []any{
			rs.GetMetadata().GetName(), int64(replicas(rs.GetSpec().Replicas)), int64(st.GetReplicas()), int64(st.GetReadyReplicas()),
			since(rs.GetMetadata().GetCreationTimestamp(), now), names, images, selectorString(rs.GetSpec().GetSelector()),
		}
	})})
}

// replicas is spec.replicas with Kubernetes' default of 1.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// containerNames joins the template's container names and images with commas.
func containerNames(t *corev1.PodTemplateSpec) (names, images string) {
	var n, i []string
	for _, c := range t.GetSpec().GetContainers() {
		n = append(n, c.GetName())
		i = append(i, c.GetImage())
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// selectorString writes a label selector in the selector syntax.
func selectorString(ls *metav1.LabelSelector) string {
	if ls == nil {
		return "<none>"
	}
	sel, err := labels.FromLabelSelector(ls)
	if err != nil {
		return "<error>"
	}
	return orNone(sel.String())
}
