package rest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"podline.dev/pkg/apierrors"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/k8sproto"
)

// transcodeProtobuf replaces a create, update or delete body in Kubernetes'
// protobuf encoding (what client-go's typed clients and kubectl send) with
// the Kubernetes JSON of the same object and marks it application/json, so
// the JSON path decodes, validates and stores it unchanged. A body it cannot
// read is a 400 whose cause names the field; nothing reaches storage.
func transcodeProtobuf(w http.ResponseWriter, r *http.Request) *apierrors.StatusError {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodDelete:
	default:
		return nil
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != k8sproto.ContentType {
		return nil
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apierrors.NewRequestEntityTooLarge(fmt.Sprintf("limit is %d", tooLarge.Limit))
		}
		return apierrors.NewBadRequest(err.Error())
	}
	var js []byte
	if len(data) > 0 {
		if js, err = k8sproto.ToJSON(data); err != nil {
			return protobufError(err)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(js))
	r.ContentLength = int64(len(js))
	r.Header.Set("Content-Length", strconv.Itoa(len(js)))
	r.Header.Set("Content-Type", "application/json")
	return nil
}

// protobufError is a 400 whose cause carries the field path and reason.
func protobufError(err error) *apierrors.StatusError {
	se := apierrors.NewBadRequest(err.Error())
	var e *k8sproto.Error
	if errors.As(err, &e) {
		se.ErrStatus.Details = &metav1.StatusDetails{Causes: []*metav1.StatusCause{{Reason: e.Reason, Message: e.Message, Field: e.Field}}}
	}
	return se
}
