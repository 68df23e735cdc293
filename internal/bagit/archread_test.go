package bagit

import (
	"testing"
)

// TestArchreadDecodePath: manifest paths are percent-decoded (CR, LF and
// '%', RFC 8493 section 2.1.3) and must stay inside the bag.
func TestArchreadDecodePath(t *testing.T) {
	for in, want := range map[string]string{
		"data/a%0Ab":   "data/a\nb",
		"data/a%0db":   "data/a\rb",
		"data/100%25":  "data/100%",
		"data/50%":     "data/50%",
		"data/%2541":   "data/%41",
		"./data/x.txt": "data/x.txt",
	} {
		got, err := checkDecodePath(in)
		if err != nil || got != want {
			t.Errorf("checkDecodePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"/etc/passwd", "data/../../x", "../x", "data//x", ""} {
		if got, err := checkDecodePath(bad); err == nil {
			t.Errorf("checkDecodePath(%q) = %q, want an error", bad, got)
		}
	}
}

// TestArchreadTagFields: "Label: value" lines, continuation lines folded.
func TestArchreadTagFields(t *testing.T) {
	f, err := checkTagFields([]byte("\ufeffBagIt-Version: 1.0\r\nExternal-Description: one\n  two\nPayload-Oxum: 12.3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v := checkField(f, "bagit-version"); v != "1.0" {
		t.Errorf("BagIt-Version %q", v)
	}
	if v := checkField(f, "External-Description"); v != "one two" {
		t.Errorf("External-Description %q", v)
	}
	if v := checkField(f, "Payload-Oxum"); v != "12.3" {
		t.Errorf("Payload-Oxum %q", v)
	}
	if _, err := checkTagFields([]byte("no colon here\n")); err == nil {
		t.Error("a line without a colon read without an error")
	}
}
