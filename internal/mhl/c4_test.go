package mhl

import (
	"crypto/sha512"
	"strings"
	"testing"
)

// Known answers: the C4 specification's ID of the empty input and of
// "foo", and the reference implementation's test vector.
func TestC4KnownAnswers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "c459dsjfscH38cYeXXYogktxf4Cd9ibshE3BHUo6a58hBXmRQdZrAkZzsWcbWtDg5oQstpDuni4Hirj75GEmTc1sFT"},
		{"foo", "c45xZeXwMSpqXjpDumcHMA6mhoAmGHkUo7r9WmN2UgSEQzj9KjgseaQdkEJ11fGb5S1WEENcV3q8RFWwEeVpC7Fjk2"},
		{"media-hash-list", "c456LycWwpMMS7VDZEKvYv2L1uJS6s4qAFnaJdnQiy5JVbBFZMA8aLDS6SPaJjLqxXH4qZdnbuktopMt9frtC2qL1R"},
	} {
		if got := C4Bytes([]byte(tc.in)); got != tc.want {
			t.Errorf("C4(%q) = %s, want %s", tc.in, got, tc.want)
		}
		got, err := C4(strings.NewReader(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("C4(reader %q) = %s, %v", tc.in, got, err)
		}
		d, err := ParseC4(tc.want)
		if err != nil || d != sha512.Sum512([]byte(tc.in)) {
			t.Errorf("ParseC4(%s) = %x, %v", tc.want, d, err)
		}
	}
}

// A digest with leading zero bits still gives 90 characters: the padding
// digit is '1'.
func TestC4PadsWithOne(t *testing.T) {
	var d [64]byte
	d[63] = 1
	id := c4ID(d[:])
	if len(id) != 90 || id != "c4"+strings.Repeat("1", 87)+"2" {
		t.Fatalf("c4ID(1) = %s (%d)", id, len(id))
	}
	back, err := ParseC4(id)
	if err != nil || back != d {
		t.Fatalf("ParseC4 = %x, %v", back, err)
	}
}

func TestParseC4Rejects(t *testing.T) {
	for _, s := range []string{"", "c4", "c5" + strings.Repeat("1", 88), "c4" + strings.Repeat("0", 88), "c4" + strings.Repeat("z", 88)} {
		if _, err := ParseC4(s); err == nil {
			t.Errorf("ParseC4(%q) accepted", s)
		}
	}
}
