package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/k8sjson"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// marshaler is the gateway's codec: Kubernetes JSON for every message.
type marshaler struct{}

var _ runtime.Marshaler = marshaler{}

func (marshaler) ContentType(any) string { return "application/json" }

// Marshal writes messages as Kubernetes JSON. The gateway wraps each
// message of a stream as {"result": m} and a stream's error as
// {"error": status}; those become a watch event and an ERROR event. A
// Table (table.go), not being a message, is written by encoding/json.
func (marshaler) Marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case proto.Message:
		return k8sjson.Marshal(x)
	case map[string]any:
		switch r := x["result"].(type) {
		case proto.Message:
			return k8sjson.Marshal(r)
		case tableEvent:
			return json.Marshal(r)
		}
	case map[string]proto.Message:
		if st, ok := x["error"].(*spb.Status); ok {
			return errorEvent(apierrors.FromError(status.FromProto(st).Err()))
		}
	}
	return json.Marshal(v)
}

// errorEvent is the watch event that ends a stream with a Status.
func errorEvent(se *apierrors.StatusError) ([]byte, error) {
	obj, err := k8sjson.Marshal(se.Status())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"ERROR","object":`)
	b.Write(obj)
	b.WriteString("}")
	return b.Bytes(), nil
}

func (marshaler) Unmarshal(data []byte, v any) error {
	m, ok := asMessage(v)
	if !ok {
		return json.Unmarshal(data, v)
	}
	_, err := k8sjson.Unmarshal(data, m)
	return err
}

func (marshaler) NewDecoder(r io.Reader) runtime.Decoder { return &decoder{r: r} }

func (m marshaler) NewEncoder(w io.Writer) runtime.Encoder {
	return runtime.EncoderFunc(func(v any) error {
		b, err := m.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

// asMessage finds the message to decode into: the gateway passes either a
// message or, for a body field, a pointer to the (possibly nil) field.
func asMessage(v any) (proto.Message, bool) {
	if m, ok := v.(proto.Message); ok {
		return m, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Pointer {
		return nil, false
	}
	if rv.Elem().IsNil() {
		rv.Elem().Set(reflect.New(rv.Elem().Type().Elem()))
	}
	m, ok := rv.Elem().Interface().(proto.Message)
	return m, ok
}

// decoder reads one request body into a message in the request's
// fieldValidation mode, checking the body's apiVersion and kind.
type decoder struct{ r io.Reader }

func (d *decoder) Decode(v any) error {
	st := &requestState{validation: k8sjson.Strict}
	if sb, ok := d.r.(*stateBody); ok {
		st = sb.state
	}
	fail := func(se *apierrors.StatusError) error {
		st.decodeErr = se
		return se
	}
	data, err := io.ReadAll(d.r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fail(apierrors.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", tooLarge.Limit)))
		}
		return fail(apierrors.NewBadRequest(err.Error()))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return io.EOF
	}
	if raw, ok := v.(*[]byte); ok {
		// A PATCH body: the registry parses it by its patch type.
		*raw = data
		return nil
	}
	m, ok := asMessage(v)
	if !ok {
		return json.Unmarshal(data, v)
	}
	if se := checkKind(data, m); se != nil {
		return fail(se)
	}
	warnings, err := k8sjson.Unmarshal(data, m, st.validation)
	if err != nil {
		return fail(decodeError(err))
	}
	st.warnings = append(st.warnings, warnings...)
	return nil
}

// checkKind refuses a body whose apiVersion/kind is not the endpoint's.
func checkKind(data []byte, m proto.Message) *apierrors.StatusError {
	apiVersion, kind, err := k8sjson.TypeMeta(data)
	if err != nil {
		return decodeError(err)
	}
	name := m.ProtoReflect().Descriptor()
	want, isKind := apis.ByMessage(string(name.FullName()))
	if !isKind || kind == "" {
		return nil
	}
	if kind != want.Kind {
		if _, known := apis.LookupKind(apiVersion, kind); !known {
			return apierrors.NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q", kind, apiVersion))
		}
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", kind, want.Kind))
	}
	if apiVersion != "" && apiVersion != want.Group.GroupVersion() {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, want.Group.GroupVersion()))
	}
	return nil
}

// decodeError makes a 400 whose causes name each field the decoder refused.
func decodeError(err error) *apierrors.StatusError {
	se := apierrors.NewBadRequest(err.Error())
	if fes := k8sjson.FieldErrors(err); len(fes) > 0 {
		d := &metav1.StatusDetails{}
		for _, fe := range fes {
			d.Causes = append(d.Causes, &metav1.StatusCause{Reason: string(fe.Reason), Message: fe.Message, Field: fe.Path})
		}
		se.ErrStatus.Details = d
	}
	return se
}
