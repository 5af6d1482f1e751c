package printers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func TestHumanDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-2 * time.Second, "<invalid>"},
		{-time.Second, "0s"},
		{0, "0s"},
		{119 * time.Second, "119s"},
		{2 * time.Minute, "2m"},
		{9*time.Minute + 59*time.Second, "9m59s"},
		{10 * time.Minute, "10m"},
		{179 * time.Minute, "179m"},
		{3 * time.Hour, "3h"},
		{7*time.Hour + 59*time.Minute, "7h59m"},
		{8 * time.Hour, "8h"},
		{47 * time.Hour, "47h"},
		{48 * time.Hour, "2d"},
		{7*24*time.Hour + 23*time.Hour, "7d23h"},
		{8 * 24 * time.Hour, "8d"},
		{729 * 24 * time.Hour, "729d"},
		{730 * 24 * time.Hour, "2y"},
		{731 * 24 * time.Hour, "2y1d"},
		{8 * 365 * 24 * time.Hour, "8y"},
	}
	for _, tt := range tests {
		if got := humanDuration(tt.d); got != tt.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestConvertRowObjects(t *testing.T) {
	rc := int64(7)
	list := &corev1.PodList{
		Metadata: &metav1.ListMeta{ResourceVersion: "99", Continue: "next", RemainingItemCount: &rc},
		Items:    []*corev1.Pod{MakePod("a").Phase("Running").Container("c", running(true)).Obj()},
	}
	tests := []struct {
		include IncludeObject
		want    string // the row's object, "" for none
	}{
		{IncludeNone, ""},
		{IncludeMetadata, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"default","resourceVersion":"42","creationTimestamp":"2026-11-30T11:58:00Z"}}`},
		{IncludeObjects, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"`},
	}
	for _, tt := range tests {
		t.Run(string(tt.include), func(t *testing.T) {
			tab, err := Convert(list, Options{Include: tt.include, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if tab.Metadata.ResourceVersion != "99" || tab.Metadata.Continue != "next" || *tab.Metadata.RemainingItemCount != 7 {
				t.Errorf("table metadata = %+v, want the list's", tab.Metadata)
			}
			got := string(tab.Rows[0].Object)
			if !strings.HasPrefix(got, tt.want) || (tt.want == "" && got != "") {
				t.Errorf("row object = %s, want prefix %s", got, tt.want)
			}
			if tt.include == IncludeObjects && list.Items[0].Kind != "" {
				t.Error("Convert wrote apiVersion/kind into the caller's list item")
			}
		})
	}
}

func TestConvertSingleObjectAndEmptyList(t *testing.T) {
	tab, err := Convert(MakePod("a").Obj(), Options{Include: IncludeNone, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 1 || tab.Rows[0].Cells[0] != "a" || tab.Metadata.ResourceVersion != "42" {
		t.Errorf("single object table = %+v", tab)
	}
	empty, err := Convert(&corev1.PodList{}, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(empty)
	if !strings.Contains(string(b), `"rows":[]`) || len(empty.ColumnDefinitions) != len(podColumns) {
		t.Errorf("empty list table = %s, want pod columns and no rows", b)
	}
	noHeaders, _ := Convert(MakePod("a").Obj(), Options{Now: now, NoHeaders: true})
	if noHeaders.ColumnDefinitions != nil {
		t.Errorf("NoHeaders kept %d column definitions", len(noHeaders.ColumnDefinitions))
	}
}

func TestPodRowConditions(t *testing.T) {
	for phase, want := range map[string]string{"Succeeded": "Succeeded", "Failed": "Failed", "Running": ""} {
		row := podRow(MakePod("p").Phase(phase).Obj(), now)
		got := ""
		if len(row.Conditions) == 1 && row.Conditions[0].Type == "Completed" {
			got = row.Conditions[0].Reason
		}
		if got != want {
			t.Errorf("phase %s: Completed condition reason %q, want %q", phase, got, want)
		}
	}
}

func TestParseIncludeObject(t *testing.T) {
	if got, _ := ParseIncludeObject(""); got != IncludeMetadata {
		t.Errorf("default includeObject = %q, want Metadata", got)
	}
	if _, err := ParseIncludeObject("Everything"); err == nil {
		t.Error("includeObject=Everything accepted")
	}
}

// Every kind podline serves prints with its own columns, not the default
// name-and-age table.
func TestEveryKindHasItsColumns(t *testing.T) {
	for _, r := range apis.Resources {
		if _, ok := handlers[protoreflect.FullName(r.Message())]; !ok {
			t.Errorf("%s (%s) has no printer", r.Kind, r.Message())
		}
	}
}
