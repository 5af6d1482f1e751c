package k8sproto

import "google.golang.org/protobuf/encoding/protowire"

// Builders for Kubernetes-shaped protobuf, written field by field with
// protowire as Kubernetes' generated Marshal writes them.

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// str is a string (or bytes) field.
func str(num int, s string) []byte {
	b := protowire.AppendTag(nil, protowire.Number(num), protowire.BytesType)
	return protowire.AppendString(b, s)
}

// varint is an int32, int64 or bool field.
func varint(num int, x int64) []byte {
	b := protowire.AppendTag(nil, protowire.Number(num), protowire.VarintType)
	return protowire.AppendVarint(b, uint64(x))
}

// sub is a message field.
func sub(num int, fields ...[]byte) []byte {
	b := protowire.AppendTag(nil, protowire.Number(num), protowire.BytesType)
	return protowire.AppendBytes(b, cat(fields...))
}

// entry is one entry of a map<string, string> or map<string, bytes>.
func entry(num int, k, v string) []byte { return sub(num, str(1, k), str(2, v)) }

// qty is one entry of a map<string, Quantity>.
func qty(num int, k, v string) []byte { return sub(num, str(1, k), sub(2, str(1, v))) }

// intOrString fields: {type=1, intVal=2, strVal=3}.
func intVal(num int, i int32) []byte  { return sub(num, varint(1, 0), varint(2, int64(i)), str(3, "")) }
func strVal(num int, s string) []byte { return sub(num, varint(1, 1), varint(2, 0), str(3, s)) }

// body is Kubernetes' envelope: "k8s\x00" and runtime.Unknown.
func body(apiVersion, kind string, raw ...[]byte) []byte {
	return cat([]byte("k8s\x00"), sub(1, str(1, apiVersion), str(2, kind)), str(2, string(cat(raw...))), str(3, ""), str(4, ""))
}

// meta is ObjectMeta as Kubernetes writes a new object's: every plain field,
// empty ones included, and an empty creationTimestamp.
func meta(name, namespace string, more ...[]byte) []byte {
	return sub(1, cat(str(1, name), str(2, ""), str(3, namespace), str(4, ""), str(5, ""), str(6, ""),
		varint(7, 0), sub(8)), cat(more...))
}
