package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/dedup"
)

// Main runs the command line and returns the exit code.
func Main() int {
	return run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := &output{stdout: stdout, stderr: stderr, args: args}
	root := newRootCommand(out)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := refuseTopicWithArgs(root, args)
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	if err == nil {
		return exitOK
	}
	code := exitCode(err)
	out.reportError(err, code)
	return code
}

// refuseTopicWithArgs refuses a help topic given paths ("fastcopy filters
// DEST"): cobra would print the topic and exit 0, and a copy of a source
// directory named like the topic would seem to have succeeded.
func refuseTopicWithArgs(root *cobra.Command, args []string) error {
	c, rest, err := root.Find(args)
	if err != nil || c == root || c.Runnable() || c.HasSubCommands() {
		return nil
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			return usageError{fmt.Errorf("%q is a help topic ('fastcopy help %s'), not a command; to copy a directory of that name, write ./%s", c.Name(), c.Name(), c.Name())}
		}
	}
	return nil
}

func newRootCommand(out *output) *cobra.Command {
	opts := &copyOptions{}
	cmd := &cobra.Command{
		Use:   "fastcopy [flags] SOURCE DEST\n  fastcopy [flags] SOURCE... DIRECTORY",
		Short: "Copy files and trees, verified, durable and safe to rerun",
		Long: `fastcopy copies files and directory trees. Every file is written out of
sight (under a temporary name, or in a new directory that has one), flushed
to stable storage, read back and checked against the source's xxh128 digest,
and only then put under its final name.

Where things land:
  fastcopy DIR DEST        DEST becomes a copy of DIR (created if missing,
                           brought up to date if it exists; never DEST/DIR)
  fastcopy FILE DEST       DEST/FILE if DEST is a directory, else DEST
  fastcopy A B C DIR       DIR/A, DIR/B, DIR/C; DIR must exist
Files in DEST that the source lacks are left alone (--delete removes them).
Symlinks named on the command line are followed; symlinks inside a tree are
copied as symlinks. A source directory named like a command (verify, cache,
filters) is written ./verify.

On a destination that ignores case (exFAT, FAT, ext4 casefold, APFS), source
names that are one name there (README, readme) are not copied over each
other: the one DEST holds already is copied, else the first in byte order,
and each other fails by name (exit 3). A source name that DEST holds under
another spelling only (readme onto README) is never copied over that file,
which may be another source file's only copy: the same content is found in
place, other content fails by name (exit 3) and DEST's file stays.

` + exitHelp,
		Example: `  fastcopy ~/Photos /media/usb/Photos                # keep one copy up to date
  fastcopy --names=encode ~/notes /media/usb/notes   # "a:b" is "a：b" there
  fastcopy --names=decode /media/usb/notes ~/notes   # and "a:b" again here
  fastcopy -v --exclude '*.tmp' --exclude 'cache/' src/ backup/
  fastcopy --json a.iso b.iso /mnt/archive > report.json
  fastcopy --delete --backup-dir /backup/old/$(date +%F) ~/data /backup/data
  fastcopy --move /media/card/DCIM ~/Photos/2026-11  # removed once copied`,
		Version:       version(),
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError{errors.New("need a SOURCE and a DEST (see 'fastcopy --help')")}
			}
			out.noResume = opts.noResume
			return runCopy(cmd.Context(), out, opts, args, cmd.InOrStdin())
		},
	}
	opts.addFlags(cmd)
	wrapFlagUsages(cmd)
	cmd.SetVersionTemplate("fastcopy {{.Version}}\n")
	cmd.InitDefaultVersionFlag() // now, not at Execute, so that docs/cli lists it
	cmd.Flags().SortFlags = false
	// An unknown or malformed flag is a usage error (exit 2), here and in
	// the subcommands, which inherit this.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(newVerifyCommand(out), newCacheCommand(out), newFiltersTopic())
	return cmd
}

// helpWidth is the width every --help is wrapped at: the running text by
// hand, the flags' descriptions by wrapFlagUsages.
const helpWidth = 80

// cobra's template functions are one map for the process: registered
// once here, not per command tree, so that commands built at once (the
// in-process tests) do not write it together.
func init() {
	cobra.AddTemplateFunc("wrappedFlagUsages", func(fs *pflag.FlagSet) string {
		return fs.FlagUsagesWrapped(helpWidth)
	})
}

// wrapFlagUsages makes cmd's usage (and its subcommands') list the flags
// with their descriptions wrapped at helpWidth and aligned under each
// other, where cobra's default prints each description on one line.
func wrapFlagUsages(cmd *cobra.Command) {
	t := cmd.UsageTemplate()
	for _, set := range []string{"LocalFlags", "InheritedFlags"} {
		t = strings.ReplaceAll(t, "{{."+set+".FlagUsages ", "{{wrappedFlagUsages ."+set+" ")
	}
	cmd.SetUsageTemplate(t)
}

type copyOptions struct {
	jobs        int
	order       copyengine.ReadOrder
	reflink     copyengine.Reflink
	verify      copyengine.VerifyMode
	dereference bool
	noSync      bool
	noResume    bool
	force       bool
	dryRun      bool
	filter      filterOptions
	manifest    string
	mhl         bool
	records     recordFlags // --manifest-hash, --mhl-hash, --bag (records.go)
	dedup       dedup.Mode
	checksum    bool
	noSpace     bool
	strict      bool
	retries     int
	dedupVerify string
	names       copyengine.NamesMode
	cache       cacheFlags
	verbose     bool
	quiet       bool
	json        bool
	progress    bool
	noProgress  bool
	also        []string // --also: further destinations
	log         string   // --log
	bwlimit     byteRate // --bwlimit
	backup      backupFlags
	mirror      mirrorFlags
}

// backupFlags are the flags of backup workflows: which existing files a
// copy leaves alone, and snapshots made of hard links.
type backupFlags struct {
	update         bool
	ignoreExisting bool
	linkDest       []string
	scrub          scrubAge // --scrub
	scrubMax       byteSize // --scrub-max
}

func (b *backupFlags) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVarP(&b.update, "update", "u", false, "leave alone a file whose copy in DEST is newer (a later mtime, at the coarser resolution of the two filesystems)")
	f.BoolVar(&b.ignoreExisting, "ignore-existing", false, "leave alone every file DEST already has, whatever it holds: neither data nor metadata is touched")
	f.StringArrayVar(&b.linkDest, "link-dest", nil, "hard-link a file to its copy at the same path under DIR (an earlier snapshot) when their contents (by digest, DIR's file read from the device) and metadata are the same, instead of copying it; repeatable, the first that matches wins; a relative DIR is relative to DEST")
	f.Var(&b.scrub, "scrub", "before the copy, read again from the device the DEST files the hash cache vouches for whose last read from the device is older than AGE (30d, 12h, 90m), oldest first, up to --scrub-max; a rotten one (its bytes changed, its stat not) is named and copied again from a source that still holds its recorded digest (exit 8)")
	f.Var(&b.scrubMax, "scrub-max", "with --scrub: read at most this many bytes of DEST files per run (K, M, G, T: binary multiples; default 64G); the next run goes on with the oldest left")
}

func (b *backupFlags) apply(eo *copyengine.Options) {
	eo.Update = b.update
	eo.IgnoreExisting = b.ignoreExisting
	eo.LinkDest = b.linkDest
	eo.Scrub = time.Duration(b.scrub)
	eo.ScrubMax = int64(b.scrubMax)
}

// mirrorFlags are --delete, its guards, --backup-dir and --move.
type mirrorFlags struct {
	delete      bool
	deleteForce bool
	maxDelete   int
	backupDir   string
	move        bool
}

func (o *copyOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVarP(&o.jobs, "jobs", "j", 0, "copy workers (default: chosen from the source device, at most 4 to a FUSE destination; -v says which)")
	// Read order (internal/readorder).
	o.order = copyengine.ReadOrderAuto
	f.Var(&o.order, "order", "order of source reads: auto (disk order on a rotational or USB source, else listing), disk (where the data lies: give it for a spinning disk whose bridge reports neither rotational nor USB), inode, listing; -v says which")
	o.reflink = copyengine.ReflinkAuto
	f.Var(&o.reflink, "reflink", "clone data blocks: auto (where the filesystem can), always, never")
	o.verify = copyengine.VerifyDevice
	f.Var(&o.verify, "verify", "read back each file before it takes its name: device, cache, off")
	f.BoolVarP(&o.dereference, "dereference", "L", false, "follow symlinks inside the tree (one that leads to DEST or into it fails: a directory is not copied into itself)")
	f.BoolVar(&o.noSync, "no-sync", false, "do not wait for the renames to reach stable storage (each file's data is still flushed before it takes its name); with --move, nor for the sources' removals: a power cut soon after may bring moved sources back")
	f.BoolVar(&o.force, "force", false, "recopy files whose size and mtime already match")
	f.BoolVar(&o.noSpace, "no-space-check", false, "try the copy even when it cannot fit in the destination's free space")
	f.BoolVar(&o.strict, "strict", false, "exit 6 when the destination could not keep something the source has (hard links, symlinks, owners, modes, ACLs, xattrs)")
	f.BoolVar(&o.noResume, "no-resume", false, "copy large files from their first byte: neither take up nor keep the temporary of an interrupted copy")
	f.BoolVarP(&o.dryRun, "dry-run", "n", false, "report what the real run would do, by the same decisions (reading files where it would); write nothing")
	o.filter.addFlags(cmd, "copy")
	o.backup.addFlags(cmd)
	o.dedup = dedup.Auto
	f.Var(&o.dedup, "dedup", "share identical content: auto (clone where possible, else hard-link), clone, hardlink, off")
	f.StringVar(&o.dedupVerify, "dedup-verify", "hash", "before sharing a duplicate: hash (equal xxh128) or bytes (compare every byte)")
	o.names = copyengine.NamesStrict
	f.Var(&o.names, "names", "names the destination cannot hold (FAT, exFAT, NTFS with Windows names): strict (fail each such file), encode (look-alike characters, reversibly), decode (undo encode when copying back)")
	f.BoolVarP(&o.checksum, "checksum", "c", false, "decide by content digest for every file whose size matches (cache entries used where valid)")
	f.IntVar(&o.retries, "retries", copyengine.DefaultRetries, "read a file again from its start this many times after a read error (100 ms, then doubling, between tries)")
	f.StringVar(&o.cache.path, "cache", "", "hash cache file (default: $XDG_CACHE_HOME/fastcopy/hashes.db)")
	f.BoolVar(&o.cache.off, "no-cache", false, "use no hash cache: decide by size and mtime, remember nothing")
	f.DurationVar(&o.cache.lockTimeout, "cache-wait", 5*time.Second, "how long to wait for a hash cache another fastcopy holds alone (runs share it)")
	f.StringArrayVar(&o.also, "also", nil, "also copy to DIR, from the same read of the source (repeatable): each destination is staged, flushed, read back and reported on its own, and one that fails does not stop the others; the exit status is the worst of theirs")
	f.StringVar(&o.manifest, "manifest", "", "write an xxhsum -H2 manifest of the source files as placed (digests from the source; files whose size matches are read on both sides) to this file, which must lie outside DEST")
	f.BoolVar(&o.mhl, "mhl", false, "record the copy as the next generation of DEST's ASC MHL history (DEST/ascmhl): every source file in place, copied or unchanged, with its xxh128 (files whose size matches are read on both sides unless the cache vouches for them); a source's own ascmhl folder is not copied")
	o.records.addFlags(cmd)
	// Mirror and verified move.
	f.BoolVar(&o.mirror.delete, "delete", false, "after the copy is verified and durable, remove from DEST what the source lacks (excluded paths are kept; a directory in which anything failed keeps its extras)")
	f.BoolVar(&o.mirror.deleteForce, "delete-force", false, "with --delete: go on when the source root is empty, or on another filesystem than the last time, while DEST is not (refused by default: an unmounted drive)")
	f.IntVar(&o.mirror.maxDelete, "max-delete", -1, "with --delete: when more than N entries would be removed, remove none and exit 7 (0: remove none, list what would go)")
	f.StringVar(&o.mirror.backupDir, "backup-dir", "", "keep what --delete removes and the old version of each file a copy replaces in this directory (outside DEST), under its path in DEST")
	f.BoolVar(&o.mirror.move, "move", false, "remove each source file once its copy is verified and durable (unchanged files only when equal by digest), then the source directories left empty")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "list each file acted on")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only errors")
	f.BoolVar(&o.json, "json", false, "write a machine-readable report to stdout (a name that is not UTF-8 also as path_base64, its bytes)")
	f.BoolVar(&o.progress, "progress", false, "show a progress bar even when stderr is not a terminal")
	f.BoolVar(&o.noProgress, "no-progress", false, "never show a progress bar")

	// Backups: an audit trail of what is durable, and a bandwidth limit.
	f.StringVar(&o.log, "log", "", "append one JSON line per file acted on to this file (outside DEST), each written once the file is durable, with a first and a last line per run (see docs/cli.md)")
	f.Var(&o.bwlimit, "bwlimit", "read and write at most this many bytes per second together, over all workers (K, M, G: binary multiples, 1024, 1024², 1024³; 4M is 4 MiB/s)")
}

func runCopy(ctx context.Context, out *output, o *copyOptions, args []string, stdin io.Reader) error {
	eo, err := o.engineOptions(args, stdin)
	if err != nil {
		return err
	}
	if len(o.filter.explain) > 0 {
		return o.filter.explainAll(out, &eo, eo.Sources)
	}
	out.verbose, out.quiet, out.json = o.verbose, o.quiet, o.json
	if len(o.also) > 0 {
		if eo.Bag {
			return usageError{errors.New("--bag makes DEST a bag, and --also copies to further destinations: make one bag per run")}
		}
		return runAlso(ctx, out, o, eo)
	}
	// The engine's own checks (Run makes them again), before the cache
	// is opened: a bad request is refused (exit 2) whether or not another
	// fastcopy holds the cache. Check also chooses the jobs.
	if err := eo.Check(); err != nil {
		if o.json {
			out.summary(copyengine.Summary{}, err)
		}
		return err
	}
	alog, err := o.openLog(out, &eo)
	if err != nil {
		if o.json {
			out.summary(copyengine.Summary{}, err)
		}
		return err
	}
	if o.verbose {
		out.info("jobs: %d (%s)", eo.Jobs, eo.JobsReason)
		out.info("read order: %s (%s)", eo.ReadOrder, eo.ReadOrderReason)
		if eo.BwLimit > 0 {
			out.info("bandwidth: at most %s/s, reads and writes together (--bwlimit)", copyengine.HumanBytes(eo.BwLimit))
		}
	}
	hc, err := o.cache.open(out, o.dryRun)
	if err != nil {
		if o.json {
			out.summary(copyengine.Summary{Verify: eo.Verify}, err)
		}
		if alog != nil {
			_ = alog.finish(copyengine.Summary{}, err)
		}
		return err
	}
	eo.Cache = hc
	if alog != nil {
		alog.start(out.args, &eo, o.cache.describe(hc))
	}
	bar := out.startProgress([]*copyengine.Stats{eo.Stats}, nil, o.progress, o.noProgress)
	sum, err := copyengine.Run(ctx, withFaults(eo))
	bar.stop()
	closeCache(out, hc)
	err = o.afterRun(out, "", sum, err)
	if alog != nil {
		if lerr := alog.finish(sum, err); lerr != nil {
			if err == nil {
				err = logError{lerr} // exit 1: the trail asked for is not there
			} else {
				out.reportError(logError{lerr}, exitFatal)
			}
		}
	}
	out.summary(sum, err)
	return err
}

// engineOptions is the one place where the copy's flags become the
// engine's options: each flag's mapping, and the refusals of flags that
// cannot go together or have no meaning (exit 2), before anything is
// opened.
func (o *copyOptions) engineOptions(args []string, stdin io.Reader) (copyengine.Options, error) {
	eo := copyengine.Options{
		Sources:      args[:len(args)-1],
		Dest:         args[len(args)-1],
		Jobs:         o.jobs,
		ReadOrder:    o.order,
		Reflink:      o.reflink,
		Verify:       o.verify,
		Dedup:        o.dedup,
		Dereference:  o.dereference,
		NoSync:       o.noSync,
		NoResume:     o.noResume,
		Force:        o.force,
		DryRun:       o.dryRun,
		Manifest:     o.manifest,
		MHL:          o.mhl,
		Names:        o.names,
		Checksum:     o.checksum,
		NoSpaceCheck: o.noSpace,
		Stats:        &copyengine.Stats{},
		BwLimit:      int64(o.bwlimit),
		Delete:       o.mirror.delete,
		DeleteForce:  o.mirror.deleteForce,
		BackupDir:    o.mirror.backupDir,
		Move:         o.mirror.move,
	}
	if o.backup.scrub > 0 && o.cache.off {
		return eo, usageError{fmt.Errorf("--scrub reads the files whose last read the hash cache records, and --no-cache uses none; drop --no-cache (or use --cache FILE)")}
	}
	if o.backup.scrubMax != 0 && o.backup.scrub == 0 {
		return eo, usageError{fmt.Errorf("--scrub-max bounds --scrub, which was not given; add --scrub AGE (such as --scrub 30d)")}
	}
	switch m := o.mirror.maxDelete; {
	case m < -1:
		return eo, usageError{fmt.Errorf("--max-delete must be 0 or more, not %d", m)}
	case m == 0:
		eo.MaxDelete = -1 // none may go
	case m > 0:
		eo.MaxDelete = m
	}
	switch o.dedupVerify {
	case "hash":
	case "bytes":
		eo.DedupVerifyBytes = true
	default:
		return eo, usageError{fmt.Errorf("--dedup-verify must be hash or bytes, not %q", o.dedupVerify)}
	}
	if o.retries < 0 {
		return eo, usageError{fmt.Errorf("--retries must be 0 or more, not %d", o.retries)}
	}
	eo.Retries = o.retries
	if o.retries == 0 {
		eo.Retries = -1 // none; 0 would mean the default
	}
	if o.quiet && o.verbose {
		return eo, usageError{errors.New("-q and -v cannot be used together")}
	}
	if o.progress && o.noProgress {
		return eo, usageError{errors.New("--progress and --no-progress cannot be used together")}
	}
	if o.mhl {
		eo.MHLToolVersion = version()
	}
	o.records.apply(&eo)
	if err := o.filter.apply(&eo, stdin); err != nil {
		return eo, err
	}
	o.backup.apply(&eo)
	return eo, nil
}

// openLog opens the audit log --log asks for, if any, and routes the
// engine's events to it as well as to the output; without --log they go
// to the output alone.
func (o *copyOptions) openLog(out *output, eo *copyengine.Options) (*auditLog, error) {
	if o.log == "" {
		eo.OnEvent = out.event
		return nil, nil
	}
	err := copyengine.CheckLogPath(eo, o.log)
	var alog *auditLog
	if err == nil {
		alog, err = openAuditLog(out, o.log, o.noSync || o.dryRun)
	}
	if err != nil {
		return nil, err
	}
	eo.OnEvent = func(ev copyengine.Event) {
		out.event(ev)
		alog.event(ev)
	}
	eo.OnFlush = alog.flushed
	return alog, nil
}

// afterRun warns of what a run's summary notes (prefix names its
// destination when there are several) and returns its outcome, which
// --strict turns into errNotKept when the destination kept less.
func (o *copyOptions) afterRun(out *output, prefix string, sum copyengine.Summary, err error) error {
	for _, n := range sum.NotKept {
		out.warn("%snot kept: %s", prefix, n)
	}
	for _, n := range slices.Concat(sum.LinkDestNotes, sum.MHLNotes) {
		out.warn("%s%s", prefix, n)
	}
	for _, n := range sum.Rotten {
		out.warn("%s%s", prefix, n)
	}
	if err == nil && len(sum.Rotten) > 0 {
		return errRotten
	}
	if err == nil && o.strict && len(sum.NotKept) > 0 {
		return errNotKept
	}
	return err
}

// logError is a --log file that could not be written to the end: the run
// exits 1 when nothing else went wrong.
type logError struct{ error }
