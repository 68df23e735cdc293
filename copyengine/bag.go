package copyengine

// checkBag refuses what a BagIt bag cannot be made of.
func (o *Options) checkBag() error {
	if !o.Bag {
		if o.BagHash != "" || len(o.BagInfo) > 0 {
			return &RefusalError{Msg: "--bag-hash and --bag-info describe the bag --bag makes, and --bag was not given", Hint: "add --bag, or leave them out"}
		}
		return nil
	}
	switch o.bagFormat() {
	case "sha256", "sha512":
	default:
		return refuse(o.BagHash, "is not a BagIt manifest format fastcopy writes", "use sha256 or sha512")
	}
	return nil
}

// bagFormat is the format of the bag's manifests: BagHash, else
// ManifestHash when it is sha256 or sha512, else sha256.
func (o *Options) bagFormat() string {
	switch {
	case o.BagHash != "":
		return o.BagHash
	case o.ManifestHash == "sha256" || o.ManifestHash == "sha512":
		return o.ManifestHash
	}
	return "sha256"
}
