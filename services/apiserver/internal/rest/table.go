package rest

import (
	"context"
	"net/http"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/services/apiserver/internal/printers"
)

// tableRequest is a read that asked for a meta.k8s.io/v1 Table (kubectl
// get sends `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...`).
type tableRequest struct {
	include printers.IncludeObject
	// sentColumns is set once a watch has sent its column definitions;
	// later events carry rows only, as kube-apiserver sends them.
	sentColumns bool
}

type tableKey struct{}

// withTable marks r as a Table request, reading its includeObject parameter.
func withTable(r *http.Request) (*http.Request, *apierrors.StatusError) {
	include, err := printers.ParseIncludeObject(r.URL.Query().Get("includeObject"))
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return r.WithContext(context.WithValue(r.Context(), tableKey{}, &tableRequest{include: include})), nil
}

func tableOf(ctx context.Context) *tableRequest {
	tr, _ := ctx.Value(tableKey{}).(*tableRequest)
	return tr
}

// tableEvent is a watch event whose object is a Table.
type tableEvent struct {
	Type   string          `json:"type"`
	Object *printers.Table `json:"object"`
}

// rewriteResponse is the gateway's response rewriter: for a Table request
// it prints the object, the list, or each watch event's object as a Table;
// every other response passes unchanged.
func rewriteResponse(ctx context.Context, resp proto.Message) (any, error) {
	tr := tableOf(ctx)
	if tr == nil {
		return resp, nil
	}
	opts := printers.Options{Include: tr.include, Now: time.Now()}
	typ, obj, isEvent := watchEventParts(resp)
	if !isEvent {
		return printers.Convert(resp, opts)
	}
	opts.NoHeaders = tr.sentColumns
	tr.sentColumns = true
	t, err := printers.Convert(obj, opts)
	if err != nil {
		return nil, err
	}
	if typ == "BOOKMARK" {
		// A bookmark carries only a resourceVersion, not an object to print.
		t.Rows = []printers.Row{}
	}
	return tableEvent{Type: typ, Object: t}, nil
}

// watchEventParts splits a <Kind>WatchEvent message into its type and object.
func watchEventParts(m proto.Message) (string, proto.Message, bool) {
	pm := m.ProtoReflect()
	fields := pm.Descriptor().Fields()
	typ, obj := fields.ByName("type"), fields.ByName("object")
	if typ == nil || obj == nil || typ.Kind() != protoreflect.StringKind || obj.Message() == nil {
		return "", nil, false
	}
	return pm.Get(typ).String(), pm.Get(obj).Message().Interface(), true
}
