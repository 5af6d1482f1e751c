package rbac

import (
	"strings"

	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/authz"
)

// All is the wildcard of verbs, groups, resources and URLs.
const All = "*"

// RuleAllows reports whether rule covers the request a.
func RuleAllows(a authz.Attributes, rule *rbacv1.PolicyRule) bool {
	if !has(rule.GetVerbs(), a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		return urlMatches(rule.GetNonResourceUrls(), a.Path)
	}
	return has(rule.GetApiGroups(), a.APIGroup) &&
		resourceMatches(rule.GetResources(), a.Resource, a.Subresource) &&
		nameMatches(rule.GetResourceNames(), a.Name)
}

// RulesAllow reports whether any rule covers a.
func RulesAllow(a authz.Attributes, rules []*rbacv1.PolicyRule) bool {
	for _, r := range rules {
		if RuleAllows(a, r) {
			return true
		}
	}
	return false
}

// has is membership with the "*" wildcard.
func has(list []string, v string) bool {
	for _, x := range list {
		if x == All || x == v {
			return true
		}
	}
	return false
}

// resourceMatches: "pods" covers only the resource, "pods/status" only the
// subresource, "*/status" the subresource of any resource, "*" everything.
func resourceMatches(list []string, resource, subresource string) bool {
	combined := resource
	if subresource != "" {
		combined += "/" + subresource
	}
	for _, r := range list {
		switch {
		case r == All, r == combined:
			return true
		case subresource != "" && r == "*/"+subresource:
			return true
		}
	}
	return false
}

// nameMatches: an empty list covers every name; otherwise the request must
// name one of them (so a list or create is never covered by resourceNames).
func nameMatches(list []string, name string) bool {
	if len(list) == 0 {
		return true
	}
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// urlMatches: exact paths, or prefixes ending in "*".
func urlMatches(list []string, path string) bool {
	for _, u := range list {
		switch {
		case u == All, u == path:
			return true
		case strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*")):
			return true
		}
	}
	return false
}
