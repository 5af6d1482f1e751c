package server

import (
	"encoding/json"

	"google.golang.org/protobuf/encoding/protowire"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/authz/node"
	"podline.dev/services/apiserver/internal/request"
)

// selfSubjectRulesReview is authorization.k8s.io/v1 SelfSubjectRulesReview.
type selfSubjectRulesReview struct {
	APIVersion string     `json:"apiVersion"`
	Kind       string     `json:"kind"`
	Metadata   objectMeta `json:"metadata"`
	Spec       struct {
		Namespace string `json:"namespace,omitempty"`
	} `json:"spec"`
	Status struct {
		ResourceRules    []resourceRule    `json:"resourceRules"`
		NonResourceRules []nonResourceRule `json:"nonResourceRules"`
		Incomplete       bool              `json:"incomplete"`
	} `json:"status"`
}

type resourceRule struct {
	Verbs         []string `json:"verbs"`
	APIGroups     []string `json:"apiGroups,omitempty"`
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

type nonResourceRule struct {
	Verbs           []string `json:"verbs"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// rulesReview lists what RBAC grants u in the review's namespace. A
// kubelet's answer is incomplete: the Node authorizer decides per object
// and lists no rules, as in Kubernetes.
func (s *Server) rulesReview(u *request.User, body []byte) (*selfSubjectRulesReview, error) {
	review := &selfSubjectRulesReview{}
	if isProtobuf(body) {
		obj, err := unwrapProtobuf(body)
		if err == nil {
			var spec []byte
			if spec, _, err = subMessage(obj, 2); err == nil {
				err = protoFields(spec, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
					if num == 1 && typ == protowire.BytesType {
						review.Spec.Namespace = string(v)
					}
				})
			}
		}
		if err != nil {
			return nil, apierrors.NewBadRequest("the SelfSubjectRulesReview body: " + err.Error())
		}
	} else if err := json.Unmarshal(body, review); err != nil {
		return nil, apierrors.NewBadRequest("the SelfSubjectRulesReview body is not valid JSON: " + err.Error())
	}
	review.APIVersion, review.Kind = "authorization.k8s.io/v1", "SelfSubjectRulesReview"
	review.Status.ResourceRules, review.Status.NonResourceRules = []resourceRule{}, []nonResourceRule{}
	if s.auth.rbac == nil {
		review.Status.Incomplete = true
		return review, nil
	}
	for _, r := range s.auth.rbac.RulesFor(u, review.Spec.Namespace) {
		if len(r.GetNonResourceUrls()) > 0 {
			review.Status.NonResourceRules = append(review.Status.NonResourceRules, nonResourceRule{Verbs: r.GetVerbs(), NonResourceURLs: r.GetNonResourceUrls()})
			continue
		}
		review.Status.ResourceRules = append(review.Status.ResourceRules, resourceRule{
			Verbs: r.GetVerbs(), APIGroups: r.GetApiGroups(), Resources: r.GetResources(), ResourceNames: r.GetResourceNames()})
	}
	_, isNode := node.NodeName(u)
	review.Status.Incomplete = isNode
	return review, nil
}
