package k8sjson

// TypeMeta reads the top-level apiVersion and kind of a JSON object without
// decoding the rest, so a server can choose the message type first. The
// whole document is checked for syntax; a missing field is "".
func TypeMeta(data []byte) (apiVersion, kind string, err error) {
	d := decoders.Get().(*decoder)
	defer func() {
		d.reset()
		decoders.Put(d)
	}()
	d.data = data
	d.skipWS()
	if d.pos >= len(data) {
		return "", "", d.eof()
	}
	if data[d.pos] != '{' {
		if err := validate(data); err != nil {
			return "", "", err
		}
		return "", "", d.typeError("TypeMeta")
	}
	d.pos++
	d.skipWS()
	if d.pos < len(data) && data[d.pos] == '}' {
		d.pos++
		return "", "", d.end()
	}
	for {
		if d.pos >= len(data) {
			return "", "", d.eof()
		}
		if data[d.pos] != '"' {
			return "", "", d.syntaxError("looking for beginning of object key string")
		}
		raw, flags, err := d.stringToken()
		if err != nil {
			return "", "", err
		}
		if flags != 0 {
			raw = []byte(d.makeString(raw, flags))
		}
		var dst *string
		var key string
		switch string(raw) { // no allocation: the compiler compares the bytes
		case "apiVersion":
			dst, key = &apiVersion, "apiVersion"
		case "kind":
			dst, key = &kind, "kind"
		}
		if err := d.colon(); err != nil {
			return "", "", err
		}
		switch {
		case dst == nil:
			err = d.skipValue()
		case d.pos < len(data) && data[d.pos] == '"':
			*dst, err = d.stringValue()
		case d.pos < len(data) && data[d.pos] == 'n':
			*dst, err = "", d.literal("null")
		default:
			if err := validate(data); err != nil {
				return "", "", err
			}
			d.stack = append(d.stack, seg{name: key, owner: typeMetaInfo})
			return "", "", d.typeError("string")
		}
		if err != nil {
			return "", "", err
		}
		d.skipWS()
		if d.pos >= len(data) {
			return "", "", d.eof()
		}
		switch data[d.pos] {
		case ',':
			d.pos++
			d.skipWS()
		case '}':
			d.pos++
			if err := d.end(); err != nil {
				return "", "", err
			}
			return apiVersion, kind, nil
		default:
			return "", "", d.syntaxError("after object key:value pair")
		}
	}
}

// end checks that nothing but space follows the top-level value.
func (d *decoder) end() error {
	d.skipWS()
	if d.pos < len(d.data) {
		return d.syntaxError("after top-level value")
	}
	return nil
}

// typeMetaInfo names the owner of apiVersion and kind in TypeMeta's errors.
var typeMetaInfo = &messageInfo{name: "TypeMeta", goType: "TypeMeta"}
