package patch

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeObjectTextGivesDecodeObjectsValues(t *testing.T) {
	for _, doc := range []string{
		`{}`,
		` {"a":1,"b":-0.5e10,"c":"x","d":true,"e":false,"f":null,"g":{},"h":[],"i":[1,"2",[3],{"4":5}]} `,
		`{"esc":"\"\\\/\b\f\n\r\t\u00e9\u2028\ud83d\ude00","raw":"é😀","<":"\u003c","dup":1,"dup":2}`,
		`{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","ports":[{"containerPort":80}]}]}}`,
	} {
		want, err := DecodeObject([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeObjectText([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s\n got %#v\nwant %#v", doc, got, want)
		}
	}
}

func TestDecodeObjectTextRefusesWhatDecodeObjectRefuses(t *testing.T) {
	for _, doc := range []string{``, `[]`, `1`, `{`, `{"a"}`, `{"a":}`, `{"a":1}x`, `{} }`, `{}]`, `{"a":"x`, `{"a":tru}`, `{"a":1,}`,
		`{"a":[1,2}`, `{"a":[1,]}`, `{a:1}`, `{"a":01}`, `{"a":1.}`, `{"a":"tab	in"}`, `{"a":"\x"}`, `{"a":nul}`} {
		if _, err := DecodeObject([]byte(doc)); err == nil {
			t.Fatalf("%q: DecodeObject accepts it", doc)
		}
		if v, err := DecodeObjectText([]byte(doc)); err == nil {
			t.Errorf("%q: got %#v, want an error", doc, v)
		}
	}
}

// FuzzDecodeObjectText checks DecodeObjectText against DecodeObject: the
// same values for a valid text, an error for one DecodeObject refuses.
func FuzzDecodeObjectText(f *testing.F) {
	f.Add(`{"a":[1,{"b":"c\u00e9"}],"d":-1.5e-3,"e":null}`)
	f.Add(`{"x":"\ud800","y":"\"","z":[[],{}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		want, werr := DecodeObject([]byte(doc))
		got, err := DecodeObjectText([]byte(doc))
		if werr == nil && !json.Valid([]byte(doc)) {
			t.Fatalf("%q: DecodeObject accepts text that is not JSON", doc)
		}
		if (werr == nil) != (err == nil) {
			t.Fatalf("%q: DecodeObject error %v, DecodeObjectText error %v", doc, werr, err)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q\n got %#v\nwant %#v", doc, got, want)
		}
	})
}
