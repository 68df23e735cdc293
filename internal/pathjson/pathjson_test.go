package pathjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestBytes gives a name's bytes only where a JSON string cannot hold them.
func TestBytes(t *testing.T) {
	for _, p := range []string{"", "a/b.txt", "caf\u00e9/\U0001F600"} {
		if b := Bytes(p); b != nil {
			t.Errorf("Bytes(%q) = %q, want nil for valid UTF-8", p, b)
		}
	}
	for _, p := range []string{"caf\xe9", "dir/\xff\xfe", "\xc3"} {
		b := Bytes(p)
		if !bytes.Equal(b, []byte(p)) {
			t.Errorf("Bytes(%q) = %q, want the name's own bytes", p, b)
		}
		// The point of the field: base64 in JSON gives the bytes back.
		out, err := json.Marshal(struct {
			B []byte `json:"path_base64,omitempty"`
		}{b})
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			B []byte `json:"path_base64"`
		}
		if err := json.Unmarshal(out, &back); err != nil || string(back.B) != p {
			t.Errorf("%q went through JSON as %s and came back %q (%v)", p, out, back.B, err)
		}
	}
}
