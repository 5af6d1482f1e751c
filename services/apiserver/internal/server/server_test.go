package server

import (
	"crypto/tls"
	"testing"
)

func TestNativeTLS(t *testing.T) {
	serving := &tls.Config{MinVersion: tls.VersionTLS12}
	tests := []struct {
		name string
		cfg  Config
		want *tls.Config
	}{
		{name: "plain server", cfg: Config{}, want: nil},
		{name: "TLS on both ports", cfg: Config{TLS: serving}, want: serving},
		{name: "TLS on REST only", cfg: Config{TLS: serving, GRPCInsecure: true}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nativeTLS(tt.cfg); got != tt.want {
				t.Errorf("nativeTLS() = %p, want %p", got, tt.want)
			}
		})
	}
}
