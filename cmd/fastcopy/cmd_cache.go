package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/internal/pathjson"
)

// cacheExitHelp is the EXIT STATUS of the cache commands that open the
// cache; each lists the codes it can return.
const cacheExitHelp = `EXIT STATUS
  0    done
  1    the cache could not be read or written
  2    usage error
  5    another fastcopy holds the cache alone (an older fastcopy, or one
       stopped while it commits) for longer than --cache-wait
`

func newCacheCommand(out *output) *cobra.Command {
	flags := &cacheFlags{}
	cmd := &cobra.Command{
		Use:   "cache path|stats|prune|clear",
		Short: "Inspect or maintain the hash cache",
		Long: `The hash cache remembers the xxh128 digest of each file fastcopy read or
verified, with the size, mtime, inode and ctime it had, so that a rerun
skips unchanged files without reading them. It lives in
$XDG_CACHE_HOME/fastcopy/hashes.db (~/.cache/fastcopy/hashes.db) unless
--cache names another file. Runs share it: while another has it open, a
run keeps what it learns in a journal next to it (hashes.db.j-*), which
the next run to have the cache alone merges.

` + cacheExitHelp,
		Example: `  fastcopy cache stats
  fastcopy cache prune
  fastcopy cache clear --cache /tmp/other.db`,
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Reached only without an action, or with one no subcommand has.
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("cache takes one action: path, stats, prune or clear")}
			}
			return usageError{fmt.Errorf("unknown cache action %q: use path, stats, prune or clear", args[0])}
		},
	}
	f := cmd.PersistentFlags()
	f.StringVar(&flags.path, "cache", "", "hash cache file (default: $XDG_CACHE_HOME/fastcopy/hashes.db)")
	f.DurationVar(&flags.lockTimeout, "cache-wait", 0, "how long to wait for a hash cache another fastcopy holds alone (runs share it)")
	cmd.AddCommand(
		newCachePathCommand(out, flags),
		newCacheStatsCommand(out, flags),
		newCachePruneCommand(out, flags),
		newCacheClearCommand(out, flags),
	)
	return cmd
}

// cacheAction is what the four cache subcommands share: no arguments, and
// errors and usage left to Main.
func cacheAction(use, short, long, example string, run func() error) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: example,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("cache %s takes no arguments, not %q", cmd.Name(), args[0])}
			}
			return nil
		},
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE:          func(*cobra.Command, []string) error { return run() },
	}
}

func newCachePathCommand(out *output, flags *cacheFlags) *cobra.Command {
	return cacheAction("path", "Print where the hash cache is",
		`path prints the file the hash cache is in: what --cache names, or
$XDG_CACHE_HOME/fastcopy/hashes.db (~/.cache/fastcopy/hashes.db). The file
need not exist yet.

EXIT STATUS
  0    done
  1    there is no user cache directory (set XDG_CACHE_HOME or HOME)
  2    usage error
`,
		`  fastcopy cache path
  du -h "$(fastcopy cache path)"`,
		func() error {
			path, err := flags.resolve()
			if err != nil {
				return err
			}
			out.printf(out.stdout, "%s\n", path)
			return nil
		})
}

func newCacheStatsCommand(out *output, flags *cacheFlags) *cobra.Command {
	var asJSON bool
	cmd := cacheAction("stats", "Show the hash cache's entries and size",
		`stats prints the cache's path, how many entries it holds (a copied file
has two: its source and its copy), the size of its file, the bytes per
entry, and the entries in journals of runs that shared the cache and are
not merged into it yet (pending; they are used all the same). It opens
the cache read-only and creates nothing: before any run, it reports 0
entries. It can run while copies run.

`+cacheExitHelp,
		`  fastcopy cache stats
  fastcopy cache stats --json --cache /tmp/other.db`,
		func() error {
			path, err := flags.resolve()
			if err != nil {
				return err
			}
			hc, err := openForAction(out, flags, "stats", path, true)
			if err != nil {
				return err
			}
			defer closeCache(out, hc)
			st, err := hc.Stats()
			if err != nil {
				return err
			}
			if asJSON {
				// The path's exact bytes too when it is not UTF-8, as
				// in the reports of a copy and of verify.
				v := struct {
					hashcache.Stats
					PathBase64 []byte `json:"path_base64,omitempty"`
				}{Stats: st, PathBase64: pathjson.Bytes(st.Path)}
				enc := json.NewEncoder(out.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(v)
			}
			out.printf(out.stdout, "path:            %s\nentries:         %d\nfile size:       %s\nbytes per entry: %.0f\n",
				st.Path, st.Entries, copyengine.HumanBytes(st.FileBytes), st.BytesPerEntry)
			if st.Pending > 0 {
				out.printf(out.stdout, "pending:         %d (in journals, merged by the next run to have the cache alone)\n", st.Pending)
			}
			return nil
		})
	cmd.Flags().BoolVar(&asJSON, "json", false, "stats as JSON")
	return cmd
}

func newCachePruneCommand(out *output, flags *cacheFlags) *cobra.Command {
	return cacheAction("prune", "Remove the entries of files that no longer exist",
		`prune removes the entry of each file that no longer exists, and prints how
many it removed. A file that cannot be looked up for another reason (no
permission) keeps its entry. Run it with every drive the cache knows files
of mounted: the entries of the files on a drive that is not are removed
too. While a copy has the cache open, the removals are journalled and
take effect when the next run has the cache alone; an entry that run
records meanwhile is kept.

`+cacheExitHelp,
		`  fastcopy cache prune
  fastcopy cache prune --cache-wait 30s`,
		func() error {
			path, err := flags.resolve()
			if err != nil {
				return err
			}
			hc, err := openForAction(out, flags, "prune", path, false)
			if err != nil {
				return err
			}
			defer closeCache(out, hc)
			n, err := hc.Prune(func(p string) bool {
				_, err := os.Lstat(p)
				return err == nil || !errors.Is(err, os.ErrNotExist)
			})
			if err != nil {
				return err
			}
			out.printf(out.stdout, "removed %d entries of files that no longer exist\n", n)
			return nil
		})
}

func newCacheClearCommand(out *output, flags *cacheFlags) *cobra.Command {
	return cacheAction("clear", "Delete the hash cache file",
		`clear deletes the cache file, the journals of runs that have finished,
and the copies of unreadable caches set aside next to it, and prints the
path it removed. A missing cache is not an error. It does not wait for a
run that has the cache open: that run goes on with what it had read, and
what it learns from then on (its journal included) goes into a new cache
file. The next run starts a new cache.

EXIT STATUS
  0    done
  1    the cache could not be removed
  2    usage error
`,
		`  fastcopy cache clear
  fastcopy cache clear --cache /tmp/other.db`,
		func() error {
			path, err := flags.resolve()
			if err != nil {
				return err
			}
			if err := hashcache.Clear(path); err != nil {
				return err
			}
			out.printf(out.stdout, "removed %s\n", path)
			return nil
		})
}

// openForAction opens the cache at path for a cache subcommand: an error
// when there is none to act on.
func openForAction(out *output, flags *cacheFlags, action, path string, readOnly bool) (*hashcache.Cache, error) {
	hc, err := flags.open(out, readOnly)
	if err != nil {
		return nil, err
	}
	if hc == nil {
		return nil, fmt.Errorf("no hash cache to %s at %q", action, path)
	}
	return hc, nil
}
