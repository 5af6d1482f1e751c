package app

import (
	"errors"
	"slices"
	"testing"
)

func TestEnabled(t *testing.T) {
	all := Names()
	tests := []struct {
		name      string
		selection []string
		want      []string
		wantErr   error
	}{
		{"default is all", nil, all, nil},
		{"star", []string{"*"}, all, nil},
		{"only some", []string{"deployment", "replicaset"}, []string{"deployment", "replicaset"}, nil},
		{"all but one", []string{"*", "-nodelifecycle"}, slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "nodelifecycle" }), nil},
		{"unknown", []string{"cronjob"}, nil, ErrUnknownController},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Enabled(tt.selection)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestEveryControllerHasDefaultWorkers(t *testing.T) {
	w := DefaultWorkers()
	for _, name := range Names() {
		if w[name] < 1 {
			t.Errorf("%s has no default worker count", name)
		}
	}
}
