package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/treeverify"
)

// checkBag validates the BagIt bag dir (RFC 8493): every manifest and tag
// manifest fastcopy computes, completeness, no extra payload files, the
// Payload-Oxum. A bag it cannot check at all (a fetch.txt, manifests in no
// format it computes, a malformed tag file) is refused, naming the file.
func checkBag(ctx context.Context, out *output, dir string, topt treeverify.TreeOptions) (treeverify.Report, error) {
	res, err := bagit.Check(ctx, dir, topt)
	var ce *bagit.CheckError
	switch {
	case errors.As(err, &ce) && errors.Is(err, bagit.ErrCheckFetch):
		return treeverify.Report{}, &copyengine.RefusalError{Path: joinPath(dir, ce.Path), Msg: "the bag is not complete: it lists files to fetch from elsewhere, and fastcopy fetches nothing",
			Hint: "fetch them first (with the tool that made the bag), list them in the manifests and remove fetch.txt, then verify again"}
	case errors.As(err, &ce):
		return treeverify.Report{}, &copyengine.RefusalError{Path: joinPath(dir, ce.Path), Msg: "cannot check the bag: " + ce.Err.Error(),
			Hint: "a bag needs bagit.txt, data/ and a manifest-<alg>.txt in one of " + strings.Join(bagCheckFormats, ", ")}
	case err != nil:
		return treeverify.Report{}, err
	}
	for _, u := range res.Unchecked {
		out.printf(out.stderr, "fastcopy: warning: %q is in a format fastcopy does not compute: its digests were not checked (the bag's other manifests were)\n", joinPath(dir, u))
	}
	return res.Report, nil
}

// bagCheckFormats are the manifest algorithms checkBag checks.
var bagCheckFormats = bagit.CheckFormats()

// joinPath names rel (a path inside the bag) below dir.
func joinPath(dir, rel string) string {
	return filepath.Join(dir, filepath.FromSlash(rel))
}
