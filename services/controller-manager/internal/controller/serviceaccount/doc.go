// Package serviceaccount is Kubernetes' serviceaccount controller: every
// Active namespace has the ServiceAccount "default", which pods run as
// when they name none. The controller creates it when a namespace appears
// (or changes) without one and again when it is deleted; a namespace being
// deleted is left alone, since nothing may be created in it.
package serviceaccount
