// Package resource parses Kubernetes quantities ("100m", "64Mi", "1.5Gi",
// "2", "1e3", "500k") as the API carries them, as strings, into exact
// integers: Value in units (bytes, cores rounded up) and MilliValue in
// thousandths (millicores). It follows k8s.io/apimachinery's
// resource.Quantity grammar:
//
//	<quantity>        ::= <signedNumber><suffix>
//	<suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//	<binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//	<decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//	<decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//
// and, like it, rounds fractions of the asked unit up ("0.5m" is 1
// millicore). Arithmetic is exact (math/big) so "8Ei" does not overflow
// while parsing; values beyond int64 saturate.
package resource
