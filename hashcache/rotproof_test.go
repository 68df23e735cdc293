package hashcache

import "testing"

// An entry marked rotten keeps its digest and its mark through the
// encoding, is valid for no file, and its stat still matches the file's
// once unmarked.
func TestRotproofRottenMark(t *testing.T) {
	t.Parallel()
	e := base
	e.Rotten = true
	got, ok := decodeValue("/k", encodeValue(nil, "/k", e))
	if !ok || got != e {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", e, got, ok)
	}
	cur := FileState{Size: e.Size, Mtime: e.Mtime, Ctime: e.Ctime, Ino: e.Ino, Volume: e.Volume}
	p := PolicyFor("ext4")
	if !base.Valid(cur, p) {
		t.Fatalf("the unmarked entry is not valid for its own stat: the test proves nothing")
	}
	if got.Valid(cur, p) {
		t.Errorf("an entry marked rotten is valid for its file: its digest would vouch for rotten bytes")
	}
	if !got.Unmarked().Valid(cur, p) || got.Unmarked().Sum != base.Sum {
		t.Errorf("Unmarked does not give back the entry as recorded: %+v", got.Unmarked())
	}
}
