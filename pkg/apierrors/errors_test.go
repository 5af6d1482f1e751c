package apierrors

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"podline.dev/pkg/field"
)

var deployments = GroupResource{Group: "apps", Resource: "deployments"}

func TestConflictMessageIsKubernetes(t *testing.T) {
	err := NewOptimisticLock(deployments, "web")
	want := `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`
	if err.Error() != want {
		t.Fatalf("got %q\nwant %q", err.Error(), want)
	}
	if err.ErrStatus.Code != 409 || !IsConflict(err) {
		t.Fatalf("code %d, IsConflict %v", err.ErrStatus.Code, IsConflict(err))
	}
}

func TestStatusSurvivesTheGRPCBoundary(t *testing.T) {
	tests := []struct {
		name string
		err  *StatusError
		code codes.Code
		is   func(error) bool
	}{
		{"not found", NewNotFound(GroupResource{Resource: "pods"}, "x"), codes.NotFound, IsNotFound},
		{"already exists", NewAlreadyExists(GroupResource{Resource: "pods"}, "x"), codes.AlreadyExists, IsAlreadyExists},
		{"conflict", NewOptimisticLock(deployments, "web"), codes.Aborted, IsConflict},
		{"expired", NewResourceExpired("too old resource version: 1 (5)"), codes.OutOfRange, IsResourceExpired},
		{"invalid", NewInvalid(GroupKind{Group: "apps", Kind: "Deployment"}, "web",
			field.ErrorList{field.Required(field.NewPath("spec", "selector"), "")}), codes.InvalidArgument, IsInvalid},
		{"unavailable", NewServiceUnavailable("etcd has no quorum"), codes.Unavailable, IsServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st, ok := status.FromError(tt.err)
			if !ok || st.Code() != tt.code {
				t.Fatalf("gRPC code %v, want %v", st.Code(), tt.code)
			}
			// What a gRPC client receives is a plain status error built from the wire form.
			wire := status.FromProto(st.Proto()).Err()
			back := FromError(wire)
			if !tt.is(wire) {
				t.Fatalf("reason lost across gRPC: %q", back.ErrStatus.Reason)
			}
			if back.ErrStatus.Message != tt.err.ErrStatus.Message || back.ErrStatus.Code != tt.err.ErrStatus.Code {
				t.Fatalf("got %v, want %v", back.ErrStatus, tt.err.ErrStatus)
			}
		})
	}
}

func TestInvalidListsEveryField(t *testing.T) {
	err := NewInvalid(GroupKind{Group: "apps", Kind: "Deployment"}, "web", field.ErrorList{
		field.Invalid(field.NewPath("spec", "replicas"), int32(-1), "must be greater than or equal to 0"),
		field.Required(field.NewPath("spec", "selector"), ""),
	})
	want := `Deployment.apps "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]`
	if err.Error() != want {
		t.Fatalf("got %q", err.Error())
	}
	causes := err.ErrStatus.Details.Causes
	if len(causes) != 2 || causes[0].Field != "spec.replicas" || causes[1].Reason != "FieldValueRequired" {
		t.Fatalf("causes %v", causes)
	}
}

func TestPlainGRPCErrorsMapToReasons(t *testing.T) {
	err := status.Error(codes.Unavailable, "connection refused")
	if !IsServiceUnavailable(err) {
		t.Fatalf("got reason %q", ReasonForError(err))
	}
	if ReasonForError(nil) != "" {
		t.Fatal("nil has a reason")
	}
}
