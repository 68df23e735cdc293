package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/bagit"
	"github.com/fastcopy/fastcopy/internal/digest"
	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/internal/treeverify"
	"github.com/fastcopy/fastcopy/verify"
)

type verifyOptions struct {
	cache    cacheFlags
	manifest string
	// manifestHash is --manifest-hash: the format of a manifest's digests
	// (nil: from its tags, its file name or its digests' length).
	manifestHash *digest.Format
	mhl          bool
	jobs         int
	fromCache    bool
	names        copyengine.NamesMode
	json         bool
	quiet        bool
	filter       filterOptions
}

func newVerifyCommand(out *output) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:           "verify [flags] SOURCE DEST\n  fastcopy verify [flags] --manifest FILE [--manifest-hash FORMAT] DIR\n  fastcopy verify [flags] [--mhl] DIR",
		Short:         "Check a copy against its source, a manifest, a history or a bag",
		Long:          verifyHelp,
		Example:       verifyExamples,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), out, o, args, cmd.InOrStdin())
		},
	}
	o.addFlags(cmd)
	return cmd
}

// addFlags declares verify's flags on cmd, their values in o.
func (o *verifyOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "", "check DIR against this manifest instead of a SOURCE tree")
	f.Var(verifyManifestHash{&o.manifestHash}, "manifest-hash", "the format of --manifest's digests ("+strings.Join(verifyManifestFormats(), ", ")+"); default: from its tags, its file name or its digests' length")
	f.BoolVar(&o.mhl, "mhl", false, "check DIR against its ASC MHL history (DIR/ascmhl); the default for one DIR that has one and no bagit.txt")
	f.IntVarP(&o.jobs, "jobs", "j", 4, "files hashed at once")
	o.names = copyengine.NamesStrict
	f.Var(&o.names, "names", "how DEST's names were written: strict (as the source's), encode or decode (as by 'fastcopy --names')")
	f.BoolVar(&o.fromCache, "from-cache", false, "read through the page cache (faster; does not check the media)")
	f.BoolVar(&o.json, "json", false, "write a machine-readable report to stdout (a name that is not UTF-8 also as path_base64, its bytes)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only differences and errors")
	f.StringVar(&o.cache.path, "cache", "", "hash cache file (default: $XDG_CACHE_HOME/fastcopy/hashes.db)")
	f.BoolVar(&o.cache.off, "no-cache", false, "read every file, trusting no cached digest (a full scrub)")
	f.DurationVar(&o.cache.lockTimeout, "cache-wait", 5*time.Second, "how long to wait for a hash cache another fastcopy holds alone (runs share it)")
	o.filter.addFlags(cmd, "compare")
}

// verifyHelp is verify's long help: what each form checks, and its exit
// status.
const verifyHelp = `verify compares by content. With two directories it hashes every file of
both (xxh128) and lists what is missing from DEST, what DEST has in
addition, and what differs. On a DEST that ignores case, names are matched
as the copy matches them: a source name DEST holds under another spelling
is that file, and of source names that are one name there, the ones the
copy failed are reported missing, saying which name holds it.

With --manifest it checks the files of DIR against a checksum manifest
(files DIR holds beyond the manifest are counted, not failed): one written
by 'fastcopy --manifest', xxhsum -H0 to -H3, sha256sum, sha512sum, sha1sum,
md5sum or b3sum, one "<digest>  <path>" a line (coreutils' escaping of
odd names read), or tagged as by --tag ("SHA256 (path) = <digest>", as
xxhsum -H3 writes). The format of a tagged line is its tag; else
--manifest-hash FORMAT if given; else the one the manifest's name says
(manifest-sha256.txt, SHA256SUMS, MD5SUMS, B3SUMS, photos.md5,
photos.xxh128); else the digest's length: 8 hex digits xxh32, 16 xxh64,
32 xxh128, 40 sha1, 64 sha256, 128 sha512. md5 (32) and blake3 (64)
share a length with xxh128 and sha256: name them (by file name or
--manifest-hash) when the name does not.

With one DIR that holds a bagit.txt it validates DIR as a BagIt bag (RFC
8493, the packaging format of libraries and archives): every file of
every manifest-<alg>.txt and tagmanifest-<alg>.txt in md5, sha1, sha256,
sha512 or blake3 (each file read once for all of them); every payload
file under data/ listed in every payload manifest, and nothing under
data/ that none lists; Payload-Oxum (bag-info.txt) equal to the payload's
bytes and files. A bag with a fetch.txt (files still to be downloaded) is
refused, and so is one whose manifests are all in other formats
(sha3_256, blake2b): a manifest in such a format beside one fastcopy
computes is named in a warning, not checked.

With one DIR that holds an ascmhl folder (or with --mhl), it checks DIR
against its ASC MHL history (the chain-of-custody format of camera
offloads; see docs/mhl.md): first the history itself, each generation
file against the C4 ID that ascmhl_chain.xml (or a parent history)
records for it; a history that fails is reported "tampered" and no file
is trusted to it. Then every file any generation lists must be there
with the digest first recorded for it, in the strongest format the
history records it in (c4, xxh128, sha1, md5, xxh3, xxh64, xxh32,
strongest first: all the specification has), and every file the history
does not list (but those its ignore patterns leave out) is a difference
too. Histories nested in subfolders are read with it. A DIR with both a
bagit.txt and an ascmhl folder is checked as a bag; --mhl checks its
history.

What a match proves: xxh128, xxh64, xxh3, xxh32 and md5 (and sha1) catch
accidents (media errors, a bad transfer, a truncated file), not a forger,
who can make another file with the same digest; sha256, sha512, blake3
and c4 (SHA-512) also stand against a forger.

A file whose hash-cache entry is still valid (same size, mtime, inode and
ctime as when fastcopy last read or verified it; never on FAT, exFAT, NTFS,
SMB or FUSE filesystems, which have no ctime to rely on) is not read again
where what it is checked against is an xxh128 (the digest the cache
keeps); every other file of DEST (or DIR) is read from the device, not
the page cache, unless --from-cache is given. --no-cache reads every file:
a full scrub of the media. A DEST written with 'fastcopy --names=encode'
(or decode) is compared with --names=encode (or decode): each SOURCE name
is looked for under the name its copy got. A DEST written with --include,
--exclude or --files-from is compared with the same flags: what they leave
out is not compared, on either side (see 'fastcopy help filters').

EXIT STATUS
  0    identical
  1    fatal error (a tree, the manifest or the history could not be read;
       a manifest line that is not one, or in a format fastcopy does not
       compute, is named with its line number)
  2    usage error; or a record fastcopy cannot check, named with what to
       do: a DIR with no history, bag or SOURCE, a bag with a fetch.txt, a
       bag or history in no format fastcopy computes, a malformed bag
  4    differences found (listed); with an ASC MHL history also a history
       that does not match its chain, a file it does not list, or one it
       records in no format fastcopy checks; with a bag also a payload file
       no manifest (or not every manifest) lists, and a wrong Payload-Oxum
  5    the hash cache is in use by another fastcopy (--no-cache reads
       without it)
  130  interrupted
`

// verifyExamples are verify's examples in its help.
const verifyExamples = `  fastcopy verify ~/Photos /media/usb/Photos
  fastcopy --manifest photos.xxh128 ~/Photos /media/usb/Photos
  fastcopy verify --manifest photos.xxh128 /media/usb/Photos
  fastcopy verify --manifest SHA256SUMS /media/usb/Photos   # by sha256sum
  fastcopy verify --manifest list.txt --manifest-hash md5 /media/usb/Photos
  fastcopy verify /Volumes/RAID/A002R2EC   # has A002R2EC/ascmhl: checked
  fastcopy verify --mhl --json /Volumes/RAID/A002R2EC > check.json
  fastcopy verify /archive/transfer-0042   # has bagit.txt: a BagIt bag
  fastcopy verify --names=encode ~/notes /media/usb/notes`

func runVerify(ctx context.Context, out *output, o *verifyOptions, args []string, stdin io.Reader) error {
	topt := treeverify.TreeOptions{Jobs: o.jobs, FromCache: o.fromCache, DestName: o.names.DestName()}
	useMHL, useBag, err := o.checkFlags(args, topt.DestName != nil)
	if err != nil {
		return err
	}
	var fo copyengine.Options
	if err := o.filter.apply(&fo, stdin); err != nil {
		return err
	}
	if len(o.filter.explain) > 0 {
		if len(args) != 2 {
			return usageError{errors.New("--explain-filter explains SOURCE DEST's filters: give SOURCE DEST")}
		}
		return o.filter.explainAll(out, &fo, args[:1])
	}
	var exclude func(string, bool) bool
	if len(args) > 0 {
		exclude, err = copyengine.Excluder(&fo, args[0]) // the rules SOURCE's tree holds apply to both trees
		if err != nil {
			return err
		}
	}
	topt.Exclude = exclude
	hc, err := o.cache.open(out, true)
	if err != nil {
		return err
	}
	defer closeCache(out, hc)
	v := verifyRun{out: out, o: o, hc: hc, topt: topt, useMHL: useMHL, useBag: useBag}
	rep, checked, err := v.check(ctx, args)
	if err != nil {
		return err
	}
	o.printReport(out, &rep, checked)
	if !rep.OK() {
		return copyengine.ErrMismatch
	}
	return nil
}

// checkFlags refuses flags that do not go together and says whether DIR
// is checked against its ASC MHL history (with --mhl, or by default for
// one DIR that has one) or as a BagIt bag (one DIR with a bagit.txt, and
// no --mhl). renames is whether --names gives DEST other names.
func (o *verifyOptions) checkFlags(args []string, renames bool) (useMHL, useBag bool, err error) {
	if o.jobs < 1 {
		return false, false, usageError{fmt.Errorf("--jobs must be 1 or more, not %d", o.jobs)}
	}
	if o.manifest != "" && renames {
		return false, false, usageError{errors.New("--names compares SOURCE with DEST; a manifest lists the names as placed already")}
	}
	if o.manifestHash != nil && o.manifest == "" {
		return false, false, usageError{errors.New("--manifest-hash gives the format of --manifest's digests: give --manifest FILE too")}
	}
	if o.mhl && o.manifest != "" {
		return false, false, usageError{errors.New("--mhl and --manifest are two ways to check DIR: give one")}
	}
	useMHL = o.mhl
	if !useMHL && o.manifest == "" && len(args) == 1 {
		useBag = bagit.CheckIsBag(args[0])
		useMHL = !useBag && mhl.HasHistory(args[0])
	}
	if (useMHL || useBag) && renames {
		return false, false, usageError{errors.New("--names compares SOURCE with DEST; an ASC MHL history or a bag lists the names as placed already")}
	}
	if (o.manifest != "" || useMHL || useBag) && o.filter.given() {
		return false, false, usageError{errors.New("a manifest, an ASC MHL history or a bag lists the files to check; --include, --exclude, --files-from, --gitignore and --filter-file apply to SOURCE DEST")}
	}
	return useMHL, useBag, nil
}

// verifyRun is one verify, its flags checked and the hash cache open.
type verifyRun struct {
	out    *output
	o      *verifyOptions
	hc     *hashcache.Cache
	topt   treeverify.TreeOptions
	useMHL bool
	useBag bool
}

// check compares what args name: a DIR with a manifest or its ASC MHL
// history, or SOURCE with DEST. checked is the tree checked (DIR or DEST).
func (v *verifyRun) check(ctx context.Context, args []string) (rep treeverify.Report, checked string, err error) {
	o := v.o
	switch {
	case o.manifest != "" && len(args) == 1:
		checked = args[0]
		rep, err = v.checkManifest(ctx, checked)
	case v.useBag && len(args) == 1:
		checked = args[0]
		rep, err = checkBag(ctx, v.out, checked, v.topt)
	case v.useMHL && len(args) == 1:
		checked = args[0]
		v.topt.Known = copyengine.CacheKnown(v.hc, checked)
		rep, err = checkMHL(ctx, v.out, checked, v.topt)
	case !v.useMHL && !v.useBag && o.manifest == "" && len(args) == 2:
		checked = args[1]
		v.topt.Known = copyengine.CacheKnown(v.hc, args[0], args[1])
		rep, err = treeverify.CompareTrees(ctx, args[0], args[1], v.topt)
	default:
		return rep, "", usageError{errors.New("verify takes SOURCE DEST, --manifest FILE DIR, or one DIR with an ASC MHL history or that is a BagIt bag (has bagit.txt; see 'fastcopy verify --help')")}
	}
	return rep, checked, err
}

// checkManifest reads the manifest and checks dir against it.
func (v *verifyRun) checkManifest(ctx context.Context, dir string) (treeverify.Report, error) {
	path := v.o.manifest
	f, ferr := os.Open(path)
	if ferr != nil {
		return treeverify.Report{}, &copyengine.RefusalError{Path: path, Msg: "cannot open manifest: " + ferr.Error(), Hint: "check the path"}
	}
	listed, perr := verify.ReadDigests(f, path, v.o.manifestHash)
	f.Close()
	if perr != nil {
		return treeverify.Report{}, fmt.Errorf("reading manifest %q: %w", path, perr)
	}
	entries := make([]treeverify.DigestEntry, len(listed))
	var guessed *digest.Format
	for i, l := range listed {
		entries[i] = treeverify.DigestEntry{Path: l.Path, Digests: []treeverify.Digest{{Format: l.Format, Value: l.Value}}}
		if l.Guessed && guessed == nil {
			guessed = l.Format
		}
	}
	v.topt.Known = copyengine.CacheKnown(v.hc, dir)
	rep, err := treeverify.CheckDigests(ctx, entries, dir, v.topt)
	if err == nil && guessed != nil && hasKind(rep.Diffs, treeverify.Differ) {
		other := map[string]string{"xxh128": "md5", "sha256": "blake3"}[guessed.Name]
		v.out.printf(v.out.stderr, "fastcopy: hint: %q names no format, so its digests were read as %s by their length; if it was written by %ssum, give --manifest-hash %s\n", path, guessed.Name, map[string]string{"md5": "md5", "blake3": "b3"}[other], other)
	}
	return rep, err
}

// hasKind reports whether diffs holds one of that kind.
func hasKind(diffs []treeverify.Diff, kind string) bool {
	for _, d := range diffs {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

// printReport writes rep to stdout: as JSON with --json, else the
// differences, one a line, and (unless --quiet) a verdict for checked.
func (o *verifyOptions) printReport(out *output, rep *treeverify.Report, checked string) {
	if o.json {
		if rep.Diffs == nil {
			rep.Diffs = []treeverify.Diff{}
		}
		enc := json.NewEncoder(out.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
		return
	}
	for _, d := range rep.Diffs {
		if d.Detail != "" {
			out.printf(out.stdout, "%-10s %q: %s\n", d.Kind, d.Path, d.Detail)
		} else {
			out.printf(out.stdout, "%-10s %q\n", d.Kind, d.Path)
		}
	}
	if !o.quiet {
		verdict := "identical"
		if !rep.OK() {
			verdict = fmt.Sprintf("%d differences", len(rep.Diffs))
		}
		from := ""
		if rep.Known > 0 {
			from = fmt.Sprintf(", %d digests from the hash cache", rep.Known)
		}
		out.printf(out.stdout, "verified %d files (%s%s) in %q: %s\n", rep.Files, copyengine.HumanBytes(rep.Bytes), from, checked, verdict)
	}
}
