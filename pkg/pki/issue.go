package pki

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"slices"
	"time"
)

// backdate is how far before "now" new certificates become valid, so a
// container whose clock is a little behind still accepts them.
const backdate = 5 * time.Minute

// authority is a loaded CA: its certificate and the key that signs with it.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// pool returns a cert pool holding only this CA.
func (a authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// selfSign returns the DER of a new CA certificate for key.
func selfSign(ca Authority, key *ecdsa.PrivateKey, now time.Time, validity time.Duration) ([]byte, error) {
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: ca.commonName()},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}

// issue returns the DER of a leaf certificate for pub, signed by ca. It never
// outlives its CA.
func issue(spec CertSpec, pub *ecdsa.PublicKey, ca authority, now time.Time, validity time.Duration) ([]byte, error) {
	serial, err := serialNumber()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		DNSNames:              spec.DNSNames,
		IPAddresses:           spec.IPAddresses,
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           spec.Usage.extKeyUsages(),
		BasicConstraintsValid: true,
	}
	return x509.CreateCertificate(rand.Reader, tmpl, ca.cert, pub, ca.key)
}

func (u Usage) extKeyUsages() []x509.ExtKeyUsage {
	var out []x509.ExtKeyUsage
	if u&ServerAuth != 0 {
		out = append(out, x509.ExtKeyUsageServerAuth)
	}
	if u&ClientAuth != 0 {
		out = append(out, x509.ExtKeyUsageClientAuth)
	}
	return out
}

// serialNumber returns a random positive 128-bit serial number.
func serialNumber() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// satisfies reports whether an existing certificate still does the job spec
// describes: signed by ca, valid at now, and carrying exactly the spec's
// subject, SANs and usages. A certificate that does not is reissued.
func satisfies(cert *x509.Certificate, spec CertSpec, ca authority, now time.Time) bool {
	_, err := cert.Verify(x509.VerifyOptions{
		Roots:       ca.pool(),
		CurrentTime: now,
		KeyUsages:   spec.Usage.extKeyUsages(),
	})
	return err == nil &&
		cert.Subject.CommonName == spec.CommonName &&
		sameSet(cert.Subject.Organization, spec.Organization) &&
		sameSet(cert.DNSNames, spec.DNSNames) &&
		sameSet(ipStrings(cert.IPAddresses), ipStrings(spec.IPAddresses)) &&
		slices.Equal(cert.ExtKeyUsage, spec.Usage.extKeyUsages())
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func ipStrings(ips []net.IP) []string {
	out := make([]string, len(ips))
	for i, ip := range ips {
		out[i] = ip.String()
	}
	return out
}
