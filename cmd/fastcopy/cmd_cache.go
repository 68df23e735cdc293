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

func newCacheCommand(out *output) *cobra.Command {
	flags := &cacheFlags{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cache path|stats|prune|clear",
		Short: "Inspect or maintain the hash cache",
		Long: `The hash cache remembers the xxh128 digest of each file fastcopy read or
verified, with the size, mtime, inode and ctime it had, so that a rerun
skips unchanged files without reading them. It lives in
$XDG_CACHE_HOME/fastcopy/hashes.db (~/.cache/fastcopy/hashes.db) unless
--cache names another file.

  path    print where the cache is
  stats   entries, file size, bytes per entry
  prune   remove entries whose files no longer exist
  clear   delete the cache file

EXIT STATUS
  0    done
  1    the cache could not be read or written
  2    usage error
  5    another fastcopy is using the cache
`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("cache takes one action: path, stats, prune or clear")}
			}
			return nil
		},
		ValidArgs:     []string{"path", "stats", "prune", "clear"},
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := flags.resolve()
			if err != nil {
				return err
			}
			switch args[0] {
			case "path":
				out.printf(out.stdout, "%s\n", path)
				return nil
			case "clear":
				err := hashcache.Clear(path)
				if errors.Is(err, hashcache.ErrLocked) {
					return lockedError{err}
				}
				if err == nil {
					out.printf(out.stdout, "removed %s\n", path)
				}
				return err
			case "stats", "prune":
			default:
				return usageError{fmt.Errorf("unknown cache action %q: use path, stats, prune or clear", args[0])}
			}
			hc, err := flags.open(out, args[0] == "stats")
			if err != nil {
				return err
			}
			if hc == nil {
				return fmt.Errorf("no hash cache to %s at %q", args[0], path)
			}
			defer closeCache(out, hc)
			if args[0] == "prune" {
				n, err := hc.Prune(func(p string) bool {
					_, err := os.Lstat(p)
					return err == nil || !errors.Is(err, os.ErrNotExist)
				})
				if err != nil {
					return err
				}
				out.printf(out.stdout, "removed %d entries of files that no longer exist\n", n)
				return nil
			}
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
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.path, "cache", "", "hash cache file (default: $XDG_CACHE_HOME/fastcopy/hashes.db)")
	f.DurationVar(&flags.lockTimeout, "cache-wait", 0, "how long to wait for a cache another fastcopy is using")
	f.BoolVar(&asJSON, "json", false, "stats as JSON")
	return cmd
}
