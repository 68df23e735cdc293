package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/treeverify"
	"github.com/fastcopy/fastcopy/verify"
)

type verifyOptions struct {
	cache     cacheFlags
	manifest  string
	jobs      int
	fromCache bool
	names     copyengine.NamesMode
	json      bool
	quiet     bool
}

func newVerifyCommand(out *output) *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [flags] SOURCE DEST\n  fastcopy verify [flags] --manifest FILE DIR",
		Short: "Compare two trees, or a tree and a manifest, by content (xxh128)",
		Long: `verify compares by content. With two directories it hashes every file of
both and lists what is missing from DEST, what DEST has in addition, and what
differs. With --manifest it checks the files of DIR against a manifest written
by 'fastcopy --manifest' or by 'xxhsum -H2' (files DIR holds beyond the
manifest are counted, not failed). On a DEST that ignores case, names are
matched as the copy matches them: a source name DEST holds under another
spelling is that file, and of source names that are one name there, the
ones the copy failed are reported missing, saying which name holds it.

A file whose hash-cache entry is still valid (same size, mtime, inode and
ctime as when fastcopy last read or verified it; never on FAT, exFAT, NTFS,
SMB or FUSE filesystems, which have no ctime to rely on) is not read again; every
other file of DEST (or DIR) is read from the device, not the page cache,
unless --from-cache is given. --no-cache reads every file: a full scrub
of the media. A DEST written with 'fastcopy --names=encode' (or decode) is
compared with --names=encode (or decode): each SOURCE name is looked for
under the name its copy got.

EXIT STATUS
  0    identical
  1    fatal error (a tree or the manifest could not be read)
  2    usage error
  4    differences found (listed)
  5    the hash cache is in use by another fastcopy (--no-cache reads
       without it)
  130  interrupted
`,
		Example: `  fastcopy verify ~/Photos /media/usb/Photos
  fastcopy --manifest photos.xxh128 ~/Photos /media/usb/Photos
  fastcopy verify --manifest photos.xxh128 /media/usb/Photos
  fastcopy verify --names=encode ~/notes /media/usb/notes`,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd.Context(), out, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.manifest, "manifest", "", "check DIR against this manifest instead of a SOURCE tree")
	f.IntVarP(&o.jobs, "jobs", "j", 4, "files hashed at once")
	o.names = copyengine.NamesStrict
	f.Var(&o.names, "names", "how DEST's names were written: strict (as the source's), encode or decode (as by 'fastcopy --names')")
	f.BoolVar(&o.fromCache, "from-cache", false, "read through the page cache (faster; does not check the media)")
	f.BoolVar(&o.json, "json", false, "write a machine-readable report to stdout (a name that is not UTF-8 also as path_base64, its bytes)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only differences and errors")
	f.StringVar(&o.cache.path, "cache", "", "hash cache file (default: $XDG_CACHE_HOME/fastcopy/hashes.db)")
	f.BoolVar(&o.cache.off, "no-cache", false, "read every file, trusting no cached digest (a full scrub)")
	f.DurationVar(&o.cache.lockTimeout, "cache-wait", 5*time.Second, "how long to wait for a hash cache another fastcopy holds alone (runs share it)")
	return cmd
}

func runVerify(ctx context.Context, out *output, o *verifyOptions, args []string) error {
	topt := treeverify.TreeOptions{Jobs: o.jobs, FromCache: o.fromCache, DestName: o.names.DestName()}
	if o.jobs < 1 {
		return usageError{fmt.Errorf("--jobs must be 1 or more, not %d", o.jobs)}
	}
	if o.manifest != "" && topt.DestName != nil {
		return usageError{errors.New("--names compares SOURCE with DEST; a manifest lists the names as placed already")}
	}
	hc, err := o.cache.open(out, true)
	if err != nil {
		return err
	}
	defer closeCache(out, hc)
	var rep treeverify.Report
	var checked string
	switch {
	case o.manifest != "" && len(args) == 1:
		checked = args[0]
		f, ferr := os.Open(o.manifest)
		if ferr != nil {
			return &copyengine.RefusalError{Path: o.manifest, Msg: "cannot open manifest: " + ferr.Error(), Hint: "check the path"}
		}
		entries, perr := verify.ReadManifest(f)
		f.Close()
		if perr != nil {
			return fmt.Errorf("reading manifest %q: %w", o.manifest, perr)
		}
		topt.Known = copyengine.CacheKnown(hc, checked)
		rep, err = treeverify.CheckManifest(ctx, entries, checked, topt)
	case o.manifest == "" && len(args) == 2:
		checked = args[1]
		topt.Known = copyengine.CacheKnown(hc, args[0], args[1])
		rep, err = treeverify.CompareTrees(ctx, args[0], args[1], topt)
	default:
		return usageError{errors.New("verify takes SOURCE DEST, or --manifest FILE DIR (see 'fastcopy verify --help')")}
	}
	if err != nil {
		return err
	}
	if o.json {
		if rep.Diffs == nil {
			rep.Diffs = []treeverify.Diff{}
		}
		enc := json.NewEncoder(out.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
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
	if !rep.OK() {
		return copyengine.ErrMismatch
	}
	return nil
}
