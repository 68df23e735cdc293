package hashcache

import "testing"

// ReadAt round-trips, and a value written before it was recorded (ending
// after the volume) decodes with ReadAt zero and is as valid as before.
func TestScrubReadAtEncoding(t *testing.T) {
	t.Parallel()
	e := base
	e.ReadAt = base.HashedAt + 12345
	got, ok := decodeValue("/k", encodeValue(nil, "/k", e))
	if !ok || got != e {
		t.Fatalf("decode = %+v, %v; want %+v", got, ok, e)
	}
	v := encodeValue(nil, "/k", base) // ReadAt zero: one byte
	cut := len(v) - checkLen - 1
	body := v[:cut:cut]
	c := check("/k", body)
	old := append(body, byte(c>>24), byte(c>>16), byte(c>>8), byte(c))
	got, ok = decodeValue("/k", old)
	if !ok || got != base || got.ReadAt != 0 {
		t.Fatalf("decode of a value without readAt = %+v, %v; want %+v", got, ok, base)
	}
	if got.Valid(stateOf(base), PolicyFor("ext4")) != base.Valid(stateOf(base), PolicyFor("ext4")) {
		t.Errorf("an entry without readAt is judged otherwise than one with it")
	}
}
