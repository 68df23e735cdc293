package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/internal/treeverify"
	"github.com/fastcopy/fastcopy/verify"
)

type verifyOptions struct {
	cache     cacheFlags
	manifest  string
	mhl       bool
	jobs      int
	fromCache bool
	names     copyengine.NamesMode
	json      bool
	quiet     bool
	filter    filterOptions
}

func newVerifyCommand(out *output) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [flags] SOURCE DEST\n  fastcopy verify [flags] --manifest FILE DIR\n  fastcopy verify [flags] [--mhl] DIR",
		Short: "Compare two trees, or a tree and a manifest or ASC MHL history, by content (xxh128)",
		Long: `verify compares by content. With two directories it hashes every file of
both and lists what is missing from DEST, what DEST has in addition, and what
differs. With --manifest it checks the files of DIR against a manifest written
by 'fastcopy --manifest' or by 'xxhsum -H2' (files DIR holds beyond the
manifest are counted, not failed). On a DEST that ignores case, names are
matched as the copy matches them: a source name DEST holds under another
spelling is that file, and of source names that are one name there, the
ones the copy failed are reported missing, saying which name holds it.

With one DIR that holds an ascmhl folder (or with --mhl), it checks DIR
against its ASC MHL history (the chain-of-custody format of camera
offloads; see docs/mhl.md): first the history itself, each generation
file against the C4 ID that ascmhl_chain.xml (or a parent history)
records for it; a history that fails is reported "tampered" and no file
is trusted to it. Then every file any generation lists must be there
with the xxh128 first recorded for it, and every file the history does
not list (but those its ignore patterns leave out) is a difference too.
Histories nested in subfolders are read with it. A file recorded only in
other formats (md5, sha1, c4, xxh64, xxh3) is reported "unchecked".

A file whose hash-cache entry is still valid (same size, mtime, inode and
ctime as when fastcopy last read or verified it; never on FAT, exFAT, NTFS,
SMB or FUSE filesystems, which have no ctime to rely on) is not read again; every
other file of DEST (or DIR) is read from the device, not the page cache,
unless --from-cache is given. --no-cache reads every file: a full scrub
of the media. A DEST written with 'fastcopy --names=encode' (or decode) is
compared with --names=encode (or decode): each SOURCE name is looked for
under the name its copy got. A DEST written with --include, --exclude or
--files-from is compared with the same flags: what they leave out is not
compared, on either side (see 'fastcopy help filters').

EXIT STATUS
  0    identical
  1    fatal error (a tree or the manifest could not be read)
  2    usage error
  4    differences found (listed); with an ASC MHL history also a history
       that does not match its chain, a file it does not list, or one it
       records in no format fastcopy checks
  5    the hash cache is in use by another fastcopy (--no-cache reads
       without it)
  130  interrupted
`,
		Example: `  fastcopy verify ~/Photos /media/usb/Photos
  fastcopy --manifest photos.xxh128 ~/Photos /media/usb/Photos
  fastcopy verify --manifest photos.xxh128 /media/usb/Photos
  fastcopy verify /Volumes/RAID/A002R2EC        # has A002R2EC/ascmhl: checked against it
  fastcopy verify --mhl --json /Volumes/RAID/A002R2EC > check.json
  fastcopy verify --names=encode ~/notes /media/usb/notes`,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), out, o, args, cmd.InOrStdin())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "", "check DIR against this manifest instead of a SOURCE tree")
	f.BoolVar(&o.mhl, "mhl", false, "check DIR against its ASC MHL history (DIR/ascmhl); the default for one DIR that has one")
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
	return cmd
}

func runVerify(ctx context.Context, out *output, o *verifyOptions, args []string, stdin io.Reader) error {
	topt := treeverify.TreeOptions{Jobs: o.jobs, FromCache: o.fromCache, DestName: o.names.DestName()}
	useMHL, err := o.checkFlags(args, topt.DestName != nil)
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
	v := verifyRun{out: out, o: o, hc: hc, topt: topt, useMHL: useMHL}
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
// is checked against its ASC MHL history: with --mhl, or by default for
// one DIR that has one. renames is whether --names gives DEST other names.
func (o *verifyOptions) checkFlags(args []string, renames bool) (useMHL bool, err error) {
	if o.jobs < 1 {
		return false, usageError{fmt.Errorf("--jobs must be 1 or more, not %d", o.jobs)}
	}
	if o.manifest != "" && renames {
		return false, usageError{errors.New("--names compares SOURCE with DEST; a manifest lists the names as placed already")}
	}
	if o.mhl && o.manifest != "" {
		return false, usageError{errors.New("--mhl and --manifest are two ways to check DIR: give one")}
	}
	useMHL = o.mhl
	if !useMHL && o.manifest == "" && len(args) == 1 {
		useMHL = mhl.HasHistory(args[0])
	}
	if useMHL && renames {
		return false, usageError{errors.New("--names compares SOURCE with DEST; an ASC MHL history lists the names as placed already")}
	}
	if (o.manifest != "" || useMHL) && o.filter.given() {
		return false, usageError{errors.New("a manifest or an ASC MHL history lists the files to check; --include, --exclude, --files-from, --gitignore and --filter-file apply to SOURCE DEST")}
	}
	return useMHL, nil
}

// verifyRun is one verify, its flags checked and the hash cache open.
type verifyRun struct {
	out    *output
	o      *verifyOptions
	hc     *hashcache.Cache
	topt   treeverify.TreeOptions
	useMHL bool
}

// check compares what args name: a DIR with a manifest or its ASC MHL
// history, or SOURCE with DEST. checked is the tree checked (DIR or DEST).
func (v *verifyRun) check(ctx context.Context, args []string) (rep treeverify.Report, checked string, err error) {
	o := v.o
	switch {
	case o.manifest != "" && len(args) == 1:
		checked = args[0]
		rep, err = v.checkManifest(ctx, checked)
	case v.useMHL && len(args) == 1:
		checked = args[0]
		v.topt.Known = copyengine.CacheKnown(v.hc, checked)
		rep, err = checkMHL(ctx, v.out, checked, v.topt)
	case !v.useMHL && o.manifest == "" && len(args) == 2:
		checked = args[1]
		v.topt.Known = copyengine.CacheKnown(v.hc, args[0], args[1])
		rep, err = treeverify.CompareTrees(ctx, args[0], args[1], v.topt)
	default:
		return rep, "", usageError{errors.New("verify takes SOURCE DEST, --manifest FILE DIR, or one DIR with an ASC MHL history (see 'fastcopy verify --help')")}
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
	entries, perr := verify.ReadManifest(f)
	f.Close()
	if perr != nil {
		return treeverify.Report{}, fmt.Errorf("reading manifest %q: %w", path, perr)
	}
	v.topt.Known = copyengine.CacheKnown(v.hc, dir)
	return treeverify.CheckManifest(ctx, entries, dir, v.topt)
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
