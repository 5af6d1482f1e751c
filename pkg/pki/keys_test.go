package pki

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"
)

func TestDecodeKeyAcceptsPKCS8AndSEC1(t *testing.T) {
	key, err := newKey()
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := encodeKey(key)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sec1 := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	tests := []struct {
		name string
		pem  []byte
		want error
	}{
		{"PKCS #8", pkcs8, nil},
		{"SEC 1", sec1, nil},
		{"not PEM", []byte("garbage"), ErrNoPEM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeKey(tt.pem)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err == nil && !got.Equal(key) {
				t.Error("decoded a different key")
			}
		})
	}
}
