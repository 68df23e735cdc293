package main

import (
	"strings"

	"github.com/fastcopy/fastcopy/internal/digest"
)

// verifyManifestHash is verify's --manifest-hash: the one format of a
// manifest's digests, when neither its tags nor its file name say it.
type verifyManifestHash struct{ f **digest.Format }

func (v verifyManifestHash) String() string {
	if v.f == nil || *v.f == nil {
		return ""
	}
	return (*v.f).Name
}

func (v verifyManifestHash) Set(s string) error {
	fs, err := digest.Parse(s)
	if err != nil {
		return err
	}
	if len(fs) != 1 || fs[0].Name == "c4" {
		return usageError{errManifestHash(s)}
	}
	*v.f = fs[0]
	return nil
}

func (v verifyManifestHash) Type() string { return "FORMAT" }

type errManifestHash string

func (e errManifestHash) Error() string {
	return "--manifest-hash names the one format of a manifest's digests (" + strings.Join(verifyManifestFormats(), ", ") + "), not " + string(e)
}

// verifyManifestFormats lists the formats a manifest may hold.
func verifyManifestFormats() []string {
	var out []string
	for _, n := range digest.Names() {
		if n != "c4" {
			out = append(out, n)
		}
	}
	return out
}
