package copyengine_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/hashcache"
	"github.com/fastcopy/fastcopy/verify"
)

// exchange swaps the names a and b in place (renameat2 RENAME_EXCHANGE), as
// a writer in DEST can at any moment.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// TestSwapperDuringRun: a writer in DEST swaps the temporaries of the run
// with files of their own in a loop while it runs. Whatever the swaps hit,
// no file under its final name holds the writer's bytes unless the run
// named it as failed, and the hash cache vouches for none of the writer's
// files.
func TestSwapperDuringRun(t *testing.T) {
	t.Parallel()
	for _, mode := range []copyengine.VerifyMode{copyengine.VerifyDevice, copyengine.VerifyCache} {
		t.Run(string(mode), func(t *testing.T) {
			base := scratchDir(t)
			src, dst := filepath.Join(base, "src"), filepath.Join(base, "dst")
			const n = 40
			for i := 0; i < n; i++ {
				data := pattern(int64(i), 20000+i)
				writeFile(t, filepath.Join(src, flatName(i)), data)
				writeFile(t, filepath.Join(dst, fmt.Sprintf("evil%02d", i)), bytes.Repeat([]byte{'x'}, len(data)))
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			var swaps atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i = (i + 1) % n {
					tmp := filepath.Join(dst, "."+flatName(i)+tempSuffix)
					if exchange(tmp, filepath.Join(dst, fmt.Sprintf("evil%02d", i))) == nil {
						swaps.Add(1)
					}
				}
			}()
			db := filepath.Join(base, "hashes.db")
			var ev events
			_, err := runCached(t, db, copyengine.Options{Sources: []string{src + "/"}, Dest: dst, Verify: mode, Jobs: 2, OnEvent: ev.record})
			stop.Store(true)
			wg.Wait()
			t.Logf("run: %v; %d swaps, %d files failed", err, swaps.Load(), len(ev.failures()))
			failed := ev.failures()
			// What is under each final name now, by inode: any cache entry
			// for one of these inodes must hold its digest.
			type held struct {
				name string
				sum  verify.Sum
			}
			placed := map[uint64]held{}
			for i := 0; i < n; i++ {
				name := flatName(i)
				p := filepath.Join(dst, name)
				got, err := os.ReadFile(p)
				if err != nil {
					if _, ok := failed[name]; !ok {
						t.Errorf("%s is missing and was not reported: %v", name, err)
					}
					continue
				}
				want, _ := os.ReadFile(filepath.Join(src, name))
				if _, ok := failed[name]; !ok && !bytes.Equal(got, want) {
					t.Errorf("%s differs from its source under its final name, and the run did not say so", name)
				}
				var st unix.Stat_t
				if err := unix.Lstat(p, &st); err != nil {
					t.Fatal(err)
				}
				placed[st.Ino] = held{name, verify.Bytes(got)}
			}
			hc, err := hashcache.Open(db, hashcache.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			hc.Range("", func(p string, e hashcache.Entry) bool {
				if h, ok := placed[e.Ino]; ok && e.Sum != h.sum {
					t.Errorf("the hash cache vouches for %s with a digest that is not of the file under %s (ino %d)", p, h.name, e.Ino)
				}
				return true
			})
		})
	}
}
