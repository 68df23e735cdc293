package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
)

// recordFlags choose the formats of the records a copy writes (manifest,
// ASC MHL generation) and make DEST a BagIt bag.
type recordFlags struct {
	manifestHash string
	mhlHash      string
	bag          bool
	bagHash      string
	bagInfo      []string
}

func (r *recordFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.manifestHash, "manifest-hash", "xxh128", "format of --manifest's digests: xxh128 (xxhsum -H2 lines), or sha256, sha512, blake3, md5, sha1, xxh64, xxh3 (the lines of sha256sum, sha512sum, b3sum, md5sum...: check with sha256sum -c); computed in the same read of each source as its xxh128")
	f.StringVar(&r.mhlHash, "mhl-hash", "xxh128", "with --mhl: the formats each file of the new generation is recorded in, comma-separated (xxh128, xxh64, xxh3, md5, sha1, c4; such as xxh64,md5 for tools that expect them), computed in the same read")
	f.BoolVar(&r.bag, "bag", false, "make DEST a BagIt bag (RFC 8493): the sources are copied into DEST/data, and bagit.txt, bag-info.txt (Payload-Oxum, Bagging-Date), manifest-sha256.txt and tagmanifest-sha256.txt are written once the copy is durable, from the digests taken in the same read; a rerun brings the bag up to date")
	f.StringVar(&r.bagHash, "bag-hash", "", "with --bag: the manifests' format, sha256 or sha512 (default: --manifest-hash when it is one of them, else sha256)")
	f.StringArrayVar(&r.bagInfo, "bag-info", nil, "with --bag: a bag-info.txt field, KEY=VALUE (repeatable; such as Source-Organization=\"City Archives\")")
}

func (r *recordFlags) apply(eo *copyengine.Options) {
	if r.manifestHash != "xxh128" {
		eo.ManifestHash = r.manifestHash
	}
	if r.mhlHash != "xxh128" {
		eo.MHLHashes = strings.Split(r.mhlHash, ",")
	}
	eo.Bag, eo.BagHash, eo.BagInfo = r.bag, r.bagHash, r.bagInfo
	if r.bag {
		eo.MHLToolVersion = version() // Bag-Software-Agent
	}
}
