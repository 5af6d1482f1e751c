package printers

import (
	"strconv"
	"strings"
	"time"

	coordinationv1 "podline.dev/proto/coordination/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
)

// Leases, EndpointSlices, PriorityClasses and the RBAC kinds.

func init() {
	register(&coordinationv1.Lease{}, handler{columns: []Column{
		nameColumn,
		{Name: "Holder", Type: "string", Description: "holderIdentity contains the identity of the holder of a current lease."},
		ageColumn,
	}, row: rowFunc(func(l *coordinationv1.Lease, now time.Time) []any {
		return []any{l.GetMetadata().GetName(), l.GetSpec().GetHolderIdentity(), since(l.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&discoveryv1.EndpointSlice{}, handler{columns: []Column{
		nameColumn,
		{Name: "AddressType", Type: "string", Description: "addressType specifies the type of address carried by this EndpointSlice."},
		{Name: "Ports", Type: "string", Description: "ports specifies the list of network ports exposed by each endpoint in this slice."},
		{Name: "Endpoints", Type: "string", Description: "endpoints is a list of unique endpoints in this slice."},
		ageColumn,
	}, row: rowFunc(func(s *discoveryv1.EndpointSlice, now time.Time) []any {
		var ports, addrs []string
		for _, p := range s.GetPorts() {
			switch {
			case p.Port != nil:
				ports = append(ports, strconv.Itoa(int(p.GetPort())))
			case p.Name != nil:
				ports = append(ports, p.GetName())
			default:
				ports = append(ports, "*")
			}
		}
		for _, e := range s.GetEndpoints() {
			addrs = append(addrs, e.GetAddresses()...)
		}
		return []any{s.GetMetadata().GetName(), s.GetAddressType(), firstThree(ports), firstThree(addrs), since(s.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&schedulingv1.PriorityClass{}, handler{columns: []Column{
		nameColumn,
		{Name: "Value", Type: "integer", Description: "value represents the integer value of this priority class."},
		{Name: "Global-Default", Type: "boolean", Description: "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class."},
		ageColumn,
		{Name: "PreemptionPolicy", Type: "string", Description: "preemptionPolicy is the Policy for preempting pods with lower priority."},
	}, row: rowFunc(func(pc *schedulingv1.PriorityClass, now time.Time) []any {
		return []any{pc.GetMetadata().GetName(), int64(pc.GetValue()), pc.GetGlobalDefault(), since(pc.GetMetadata().GetCreationTimestamp(), now), pc.GetPreemptionPolicy()}
	})})
	roleColumns := []Column{nameColumn, {Name: "Created At", Type: "string", Format: "date", Description: "CreationTimestamp is the time the object was created."}}
	register(&rbacv1.Role{}, handler{columns: roleColumns, row: rowFunc(func(r *rbacv1.Role, _ time.Time) []any {
		return []any{r.GetMetadata().GetName(), createdAt(r.GetMetadata().GetCreationTimestamp().GetSeconds())}
	})})
	register(&rbacv1.ClusterRole{}, handler{columns: roleColumns, row: rowFunc(func(r *rbacv1.ClusterRole, _ time.Time) []any {
		return []any{r.GetMetadata().GetName(), createdAt(r.GetMetadata().GetCreationTimestamp().GetSeconds())}
	})})
	bindingColumns := []Column{
		nameColumn,
		{Name: "Role", Type: "string", Description: "RoleRef references a Role or ClusterRole."},
		ageColumn,
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the roleBinding"},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the roleBinding"},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the roleBinding"},
	}
	register(&rbacv1.RoleBinding{}, handler{columns: bindingColumns, row: rowFunc(func(b *rbacv1.RoleBinding, now time.Time) []any {
		return bindingCells(b.GetMetadata().GetName(), b.GetRoleRef(), b.GetSubjects(), since(b.GetMetadata().GetCreationTimestamp(), now))
	})})
	register(&rbacv1.ClusterRoleBinding{}, handler{columns: bindingColumns, row: rowFunc(func(b *rbacv1.ClusterRoleBinding, now time.Time) []any {
		return bindingCells(b.GetMetadata().GetName(), b.GetRoleRef(), b.GetSubjects(), since(b.GetMetadata().GetCreationTimestamp(), now))
	})})
}

// firstThree lists up to three values and how many more there are, or
// <unset> for none.
func firstThree(v []string) string {
	switch {
	case len(v) == 0:
		return "<unset>"
	case len(v) > 3:
		return strings.Join(v[:3], ",") + " + " + strconv.Itoa(len(v)-3) + " more..."
	}
	return strings.Join(v, ",")
}

func createdAt(sec int64) string {
	return time.Unix(sec, 0).UTC().Format(time.RFC3339)
}

// bindingCells: ROLE is <kind>/<name>; the wide columns list the subjects
// by kind, service accounts as <namespace>:<name>.
func bindingCells(name string, ref *rbacv1.RoleRef, subjects []*rbacv1.Subject, age string) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.GetKind() {
		case "User":
			users = append(users, s.GetName())
		case "Group":
			groups = append(groups, s.GetName())
		case "ServiceAccount":
			sas = append(sas, s.GetNamespace()+":"+s.GetName())
		}
	}
	return []any{name, ref.GetKind() + "/" + ref.GetName(), age, strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
