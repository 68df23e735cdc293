package copyengine_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fastcopy/fastcopy/copyengine"
	"github.com/fastcopy/fastcopy/internal/loopfs"
)

// srcdurableTrialsEnv names the variable that sets how many power cuts
// each variant of the srcdurable power-cut tests makes (a few by default,
// to keep CI short; FASTCOPY_POWERCUT_TRIALS=100 for a long hunt).
const srcdurableTrialsEnv = "FASTCOPY_POWERCUT_TRIALS"

// srcdurableTrials returns the number of cuts per variant: def, or what
// srcdurableTrialsEnv says.
func srcdurableTrials(def int) int {
	if n, err := strconv.Atoi(os.Getenv(srcdurableTrialsEnv)); err == nil && n > 0 {
		return n
	}
	return def
}

// srcdurableCutAt picks the moment of cut i of a run that took took: the
// first right after exit (-1), then half at random moments of the whole
// run and half near its end, where the removals are.
func srcdurableCutAt(i int, took time.Duration, r *rand.Rand) time.Duration {
	switch {
	case i == 0:
		return -1
	case i%2 == 1:
		return time.Duration(r.Float64() * float64(took))
	default:
		return time.Duration((0.6 + 0.45*r.Float64()) * float64(took))
	}
}

// TestSrcDurablePowerCutDeleteBackup cuts the power (xfs_io shutdown, the
// log lost) to DEST's xfs and to the --backup-dir's filesystem during
// `--delete --backup-dir` runs, at moments spread over the run and right
// after exit 0, with the backup directory on DEST's filesystem (kept by a
// link) and on another one (kept by a verified copy). After the remount
// every old version of a file the run deletes or replaces must be whole in
// DEST or in the backup directory, no file under a final name on either
// side may be partial, a run that exited 0 must have left everything in
// place, and a rerun must finish the mirror with every old version in the
// backup directory.
func TestSrcDurablePowerCutDeleteBackup(t *testing.T) {
	needCut(t)
	if testing.Short() {
		t.Skip("skipping: power cuts take a while (-short)")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d; %d cuts per variant (%s)", seed, srcdurableTrials(8), srcdurableTrialsEnv)
	r := rand.New(rand.NewSource(seed))
	d := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	other := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	src := filepath.Join(scratchDir(t), "data")
	for _, v := range []struct {
		name string
		fs   []*loopfs.FS // what loses power
		bk   string
	}{
		{"backup-on-dest-fs", []*loopfs.FS{d}, d.Path("old")},
		{"backup-elsewhere", []*loopfs.FS{d, other}, other.Path("old")},
	} {
		t.Run(v.name, func(t *testing.T) {
			var took time.Duration
			for i := 0; i < srcdurableTrials(8); i++ {
				at := srcdurableCutAt(i, took, r)
				el := srcdurableDeleteTrial(t, v.fs, src, d.Path("mirror"), v.bk, at, r)
				if i == 0 {
					took = el
				}
			}
		})
	}
}

// srcdurableDeleteTrial writes a fresh source and an older DEST (files the
// source lacks, in directories of their own too; files it holds in newer
// versions; files it holds unchanged), runs --delete --backup-dir bk with
// the power of fss cut at (after exit when at < 0), remounts and checks.
// It returns how long the run had until the cut.
func srcdurableDeleteTrial(t *testing.T, fss []*loopfs.FS, src, dst, bk string, at time.Duration, r *rand.Rand) time.Duration {
	t.Helper()
	for _, p := range []string{src, dst, bk} {
		noErr(t, os.RemoveAll(p))
	}
	newer, older := map[string][]byte{}, map[string][]byte{}
	when := time.Unix(1_700_000_000, 0)
	for i := 0; i < 360; i++ {
		dir := fmt.Sprintf("d%d", i%5)
		if i%7 == 0 {
			dir = filepath.Join(dir, "sub")
		}
		rel := filepath.Join(dir, fmt.Sprintf("f%03d", i))
		switch i % 3 {
		case 0: // the source lacks it: deleted, kept in bk
			if i%4 == 0 {
				rel = filepath.Join("gone", rel)
			}
			older[rel] = pattern(r.Int63(), 1+r.Intn(16<<10))
		case 1: // replaced by a newer version, the old one kept in bk
			older[rel] = pattern(r.Int63(), 1+r.Intn(16<<10))
			newer[rel] = pattern(r.Int63(), 1+r.Intn(16<<10))
		default: // unchanged
			newer[rel] = pattern(r.Int63(), 1+r.Intn(16<<10))
			writeFile(t, filepath.Join(dst, rel), newer[rel])
			noErr(t, os.Chtimes(filepath.Join(dst, rel), when, when))
		}
	}
	writeFiles(t, src, newer)
	for rel := range newer {
		noErr(t, os.Chtimes(filepath.Join(src, rel), when, when))
	}
	writeFiles(t, dst, older)
	unix.Sync() // what the trial starts from is on the devices
	settleSources()
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Delete: true, BackupDir: bk}
	took, runErr := runCutAt(t, opt, at, func() error {
		for _, f := range fss {
			if err := f.Cut(false); err != nil {
				return err
			}
		}
		return nil
	})
	if at < 0 && runErr != nil {
		t.Fatalf("the run before the cut failed: %v", runErr)
	}
	for _, f := range fss {
		noErr(t, f.Remount())
	}
	what := fmt.Sprintf("cut at %v of the run (%v)", at, runErr)
	if at < 0 {
		what = "cut after exit 0"
	}
	lost, inDst, inBk := 0, 0, 0
	for rel, old := range older {
		switch {
		case srcdurableHolds(filepath.Join(dst, rel), old):
			inDst++
		case srcdurableBackedUp(bk, rel, old):
			inBk++
		default:
			lost++
			if lost <= 5 {
				t.Errorf("%s: the old version of %s is whole neither in DEST nor in the backup directory", what, rel)
			}
		}
	}
	if lost > 5 {
		t.Errorf("%s: %d old versions lost in all", what, lost)
	}
	srcdurableNoPartial(t, what+": DEST", dst, func(rel string, got []byte) bool {
		return bytes.Equal(got, newer[rel]) || bytes.Equal(got, older[rel])
	})
	srcdurableNoPartial(t, what+": the backup directory", bk, func(rel string, got []byte) bool {
		return bytes.Equal(got, older[srcdurableUnnumbered(rel)])
	})
	if at < 0 && inDst > 0 {
		t.Errorf("%s: %d old versions still in DEST", what, inDst)
	}
	t.Logf("%s: of %d old versions %d in DEST, %d in the backup directory", what, len(older), inDst, inBk)

	// The rerun finishes the mirror and keeps every old version.
	if _, err := runEngine(t, opt); err != nil {
		t.Fatalf("%s: the rerun failed: %v", what, err)
	}
	sameTree(t, src, dst)
	for rel, old := range older {
		if !srcdurableBackedUp(bk, rel, old) {
			t.Errorf("%s: after the rerun the old version of %s is not in the backup directory", what, rel)
		}
	}
	return took
}

// srcdurableHolds reports whether the regular file p holds want.
func srcdurableHolds(p string, want []byte) bool {
	got, err := os.ReadFile(p)
	return err == nil && bytes.Equal(got, want)
}

// srcdurableBackedUp reports whether bk holds want at rel or at one of its
// numbered names (rel.~N~).
func srcdurableBackedUp(bk, rel string, want []byte) bool {
	if srcdurableHolds(filepath.Join(bk, rel), want) {
		return true
	}
	for n := 1; n < 10; n++ {
		if srcdurableHolds(filepath.Join(bk, fmt.Sprintf("%s.~%d~", rel, n)), want) {
			return true
		}
	}
	return false
}

var srcdurableNumbered = regexp.MustCompile(`\.~[0-9]+~$`)

// srcdurableUnnumbered is rel without the .~N~ a taken name gets in the
// backup directory.
func srcdurableUnnumbered(rel string) string { return srcdurableNumbered.ReplaceAllString(rel, "") }

// srcdurableNoPartial fails the test for every regular file under root,
// but for temporaries and staged directories, whose content ok refuses.
func srcdurableNoPartial(t *testing.T, what, root string, ok func(rel string, got []byte) bool) {
	t.Helper()
	bad := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) && p == root {
			return fs.SkipDir
		}
		if err != nil {
			return err
		}
		if srcdurableIsTemp(d.Name()) || (d.Name() == madeRecordName && filepath.Dir(p) == root && !strings.HasPrefix(what, "cut after exit 0")) {
			// fastcopy's own: a temporary, or the record of what a run made,
			// which a cut during the run leaves; after exit 0 the record's
			// removal is durable too, and a record found then fails.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		got, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !ok(rel, got) {
			bad++
			if bad <= 5 {
				t.Errorf("%s: %s under its final name is neither version (%d bytes)", what, rel, len(got))
			}
		}
		return nil
	})
	noErr(t, err)
}

// srcdurableIsTemp reports whether name is one of fastcopy's hidden temporaries.
func srcdurableIsTemp(name string) bool {
	return len(name) > len(tempSuffix) && name[len(name)-len(tempSuffix):] == tempSuffix
}

// srcdurableCard is an exFAT card as a test can cut its power: an exFAT
// image mounted through exfat-fuse, whose image file lies on an xfs
// filesystem of its own. A cut shuts that xfs down without writing its log
// (so that nothing the driver did not flush through to the image reaches
// it: exfat-fuse flushes with an fsync of its device, which the loop
// device passes on to the image file) and then kills the driver, as a card
// pulled from a reader without power loses what the driver and the page
// cache held. Remount mounts the xfs again, which recovers it from its
// log, and the card as it is on it.
type srcdurableCard struct {
	lower *loopfs.FS
	img   string
	dev   string // the loop device of the image, "" when detached
	Dir   string // the card's mount point
}

// srcdurableNewCard makes and mounts a card of size bytes, or skips.
func srcdurableNewCard(t *testing.T, size int64) *srcdurableCard {
	t.Helper()
	for _, tool := range []string{"mkfs.exfat", "mount.exfat-fuse", "losetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv(loopfs.RequireEnv) != "" {
				t.Fatalf("%s not found (Debian: exfatprogs, exfat-fuse) and %s is set", tool, loopfs.RequireEnv)
			}
			t.Skipf("skipping: %s not found (Debian: apt-get install exfatprogs exfat-fuse)", tool)
		}
	}
	c := &srcdurableCard{lower: loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20}), Dir: t.TempDir()}
	c.img = c.lower.Path("card.img")
	f, err := os.Create(c.img)
	noErr(t, err)
	noErr(t, f.Truncate(size))
	noErr(t, f.Close())
	noErr(t, srcdurableRun("mkfs.exfat", c.img))
	unix.Sync()
	// After the lower filesystem's cleanup in order: the card goes first.
	t.Cleanup(func() {
		if err := c.detach(); err != nil {
			t.Error(err)
		}
	})
	noErr(t, c.attach())
	return c
}

// Path joins elem to the card's mount point.
func (c *srcdurableCard) Path(elem ...string) string {
	return filepath.Join(append([]string{c.Dir}, elem...)...)
}

// attach attaches the image to a loop device and mounts it with exfat-fuse.
func (c *srcdurableCard) attach() error {
	out, err := exec.Command("losetup", "--find", "--show", c.img).CombinedOutput()
	if err != nil {
		return fmt.Errorf("losetup %s: %v: %s", c.img, err, out)
	}
	c.dev = string(bytes.TrimSpace(out))
	if err := srcdurableRun("mount.exfat-fuse", c.dev, c.Dir); err != nil {
		return err
	}
	for i := 0; i < 200; i++ {
		if srcdurableMounted(c.Dir) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("exfat-fuse: %s did not appear as a mount point", c.Dir)
}

// detach unmounts the card (lazily when its driver is dead) and frees its
// loop device.
func (c *srcdurableCard) detach() error {
	if srcdurableMounted(c.Dir) {
		var err error
		for i := 0; i < 40; i++ {
			if err = srcdurableRun("umount", c.Dir); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			if lerr := srcdurableRun("umount", "--lazy", c.Dir); lerr != nil {
				return err
			}
		}
	}
	if c.dev == "" {
		return nil
	}
	dev := c.dev
	if err := srcdurableRun("losetup", "-d", c.dev); err != nil {
		return err
	}
	c.dev = ""
	// The loop device lets the image go once the last user of the card's
	// block device (a lazily unmounted fuseblk) has: the xfs under it
	// cannot be unmounted before.
	for i := 0; i < 3000; i++ {
		out, err := exec.Command("losetup", "-j", c.img).CombinedOutput()
		if err == nil && len(bytes.TrimSpace(out)) == 0 {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	mi, _ := os.ReadFile("/proc/self/mountinfo")
	var mine []string
	for _, l := range bytes.Split(mi, []byte("\n")) {
		if bytes.Contains(l, []byte(c.Dir)) || bytes.Contains(l, []byte(dev)) {
			mine = append(mine, string(l))
		}
	}
	holders, _ := os.ReadDir("/sys/block/" + filepath.Base(dev) + "/holders")
	fu, _ := exec.Command("fuser", "-v", dev).CombinedOutput()
	return fmt.Errorf("the loop device %s of %s did not let it go; this process holds open on the card: %q; mounts %q; holders %v; fuser %s", dev, c.img, srcdurableOpenUnder(c.Dir), mine, holders, fu)
}

// srcdurableOpenUnder lists the descriptors of this process that lead
// under dir.
func srcdurableOpenUnder(dir string) []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && (p == dir || len(p) > len(dir) && p[:len(dir)+1] == dir+"/") {
			out = append(out, e.Name()+" "+p)
		}
	}
	return out
}

// Cut cuts the card's power: the xfs under its image first, then the
// driver.
func (c *srcdurableCard) Cut() error {
	if err := c.lower.Cut(false); err != nil {
		return err
	}
	pid, err := srcdurableDriverPID(c.dev, c.Dir)
	if err != nil {
		return err
	}
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		return err
	}
	for i := 0; i < 1000; i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil
		}
		if j := bytes.LastIndexByte(b, ')'); j >= 0 && len(b) > j+2 && b[j+2] == 'Z' {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("exfat-fuse %d of %s did not exit after SIGKILL", pid, c.Dir)
}

// Remount brings the card back after a Cut: the xfs under it recovered
// from its log, the image attached and mounted again as it is there.
func (c *srcdurableCard) Remount() error {
	if err := c.detach(); err != nil {
		return err
	}
	if err := c.lower.Remount(); err != nil {
		return err
	}
	return c.attach()
}

// srcdurableDriverPID finds the FUSE driver serving dev on dir by its
// command line.
func srcdurableDriverPID(dev, dir string) (int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
		if len(args) > 1 && string(args[len(args)-1]) == dir && string(args[len(args)-2]) == dev {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no driver process found for %s on %s", dev, dir)
}

// srcdurableMounted reports whether dir is a mount point, by mountinfo
// (a stat of it fails once its FUSE driver is dead). The test's temporary
// directories need no unescaping.
func srcdurableMounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) > 4 && string(f[4]) == dir {
			return true
		}
	}
	return false
}

// TestSrcDurablePowerCutMoveFold cuts the power during --move runs whose
// source (xfs, case-sensitive) holds names that are one name on the
// destination, an exFAT card through exfat-fuse (README and readme, in
// several directories): the first of each pair is moved, the other fails
// as a collision and is kept (exit 3). Both sides lose power at moments
// spread over the run and right after it ends (the source by xfs_io
// shutdown, the card as srcdurableCard cuts it). After the remount every
// source file must be whole on one side at least; after a run that ended,
// no file it moved may be back in the source, and every file it kept must
// be whole there.
func TestSrcDurablePowerCutMoveFold(t *testing.T) {
	needCut(t)
	if testing.Short() {
		t.Skip("skipping: power cuts take a while (-short)")
	}
	trials := srcdurableTrials(10)
	seed := time.Now().UnixNano()
	t.Logf("seed %d; %d cuts (%s)", seed, trials, srcdurableTrialsEnv)
	r := rand.New(rand.NewSource(seed))
	s := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	card := srcdurableNewCard(t, 128<<20)
	srcdurableCardLoses(t, card)
	src, dst := s.Path("src"), card.Path("DCIM")
	var took time.Duration
	for i := 0; i < trials; i++ {
		at := srcdurableCutAt(i, took, r)
		el := srcdurableFoldTrial(t, s, card, src, dst, at, r)
		if i == 0 {
			took = el
		}
	}
}

// srcdurableFoldTrial writes a fresh source with colliding names, moves it
// onto the card with the power of both cut at (after the run when at < 0),
// remounts and checks. It returns how long the run had until the cut.
func srcdurableFoldTrial(t *testing.T, s *loopfs.FS, card *srcdurableCard, src, dst string, at time.Duration, r *rand.Rand) time.Duration {
	t.Helper()
	noErr(t, os.RemoveAll(src))
	noErr(t, os.RemoveAll(dst))
	files := map[string][]byte{}
	for i := 0; i < 240; i++ {
		rel := filepath.Join(fmt.Sprintf("1%02dCANON", i%4), fmt.Sprintf("IMG_%04d.JPG", i))
		files[rel] = pattern(r.Int63(), 1+r.Intn(24<<10))
	}
	pairs := map[string]string{} // readme -> README: one name on the card
	for i, dir := range []string{"", "100CANON", "101CANON", "notes"} {
		upper, lower := filepath.Join(dir, "README"), filepath.Join(dir, "readme")
		files[upper] = pattern(r.Int63(), 100+i)
		files[lower] = pattern(r.Int63(), 200+i)
		pairs[lower] = upper
	}
	writeFiles(t, src, files)
	unix.Sync()
	settleSources()
	var ev events
	opt := copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, OnEvent: ev.record}
	took, runErr := runCutAt(t, opt, at, func() error {
		if err := s.Cut(false); err != nil {
			return err
		}
		return card.Cut()
	})
	ended := at < 0
	if ended && !errors.Is(runErr, copyengine.ErrSomeFailed) {
		t.Fatalf("the run before the cut: %v, want ErrSomeFailed (the collisions)", runErr)
	}
	noErr(t, s.Remount())
	noErr(t, card.Remount())
	what := fmt.Sprintf("cut at %v of the run (%v)", at, runErr)
	if ended {
		what = "cut after the run ended (exit 3)"
	}
	failed := ev.failures()
	inSrc, inDst, neither, back := 0, 0, 0, 0
	for rel, want := range files {
		onSrc := srcdurableHolds(filepath.Join(src, rel), want)
		onDst := srcdurableHolds(filepath.Join(dst, rel), want)
		switch {
		case onSrc:
			inSrc++
		case onDst:
			inDst++
		default:
			neither++
			if neither <= 5 {
				t.Errorf("%s: %s is whole on neither side", what, rel)
			}
		}
		if !ended {
			continue
		}
		if _, kept := failed[rel]; kept {
			if !onSrc {
				t.Errorf("%s: %s failed (%v), yet it is not whole in the source", what, rel, failed[rel])
			}
		} else if _, err := os.Lstat(filepath.Join(src, rel)); err == nil {
			back++
		}
	}
	if neither > 5 {
		t.Errorf("%s: %d files whole on neither side", what, neither)
	}
	if ended {
		for lower, upper := range pairs {
			_, l := failed[lower]
			_, u := failed[upper]
			if l == u {
				t.Errorf("%s: of %s and %s, not one alone failed as a collision (failures: %v)", what, upper, lower, failed)
			}
		}
		if back > 0 {
			t.Errorf("%s: %d files the run moved are back in the source", what, back)
		}
	}
	t.Logf("%s: %d files whole in the source, %d only in DEST, %d failures", what, inSrc, inDst, len(failed))
	return took
}

// srcdurableCardLoses checks that a cut of the card loses what was not
// flushed and keeps what was (a file written and fsynced, another written
// after it without): a cut that lost nothing would make the tests that
// rely on it prove nothing.
func srcdurableCardLoses(t *testing.T, card *srcdurableCard) {
	t.Helper()
	kept, lost := card.Path("flushed"), card.Path("unflushed")
	f, err := os.Create(kept)
	noErr(t, err)
	_, err = f.Write([]byte("flushed"))
	noErr(t, err)
	noErr(t, f.Sync())
	noErr(t, f.Close())
	writeFile(t, lost, []byte("not flushed"))
	noErr(t, card.Cut())
	noErr(t, card.Remount())
	if !srcdurableHolds(kept, []byte("flushed")) {
		t.Fatalf("the card lost a file fsynced before the cut")
	}
	if _, err := os.Lstat(lost); err == nil {
		t.Fatalf("the card kept a file written after the last fsync: its cut loses nothing, and cannot test durability")
	}
	noErr(t, os.Remove(kept))
}

// TestSrcDurableMoveFromCardPowerCut: a --move from an exFAT card
// (exfat-fuse, whose driver takes no syncfs: each directory removed from
// is fsynced instead) to an xfs DEST exits 0; then both lose power. No
// moved file and no removed directory may be back on the card.
func TestSrcDurableMoveFromCardPowerCut(t *testing.T) {
	needCut(t)
	card := srcdurableNewCard(t, 128<<20)
	srcdurableCardLoses(t, card)
	d := loopfs.Mount(t, loopfs.Config{Type: "xfs", Size: 300 << 20})
	src, dst := card.Path("DCIM"), d.Path("Photos")
	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	files := map[string][]byte{}
	for i := 0; i < 300; i++ {
		dir := fmt.Sprintf("1%02dCANON", i%3)
		if i%4 == 0 {
			dir = filepath.Join(dir, "burst")
		}
		files[filepath.Join(dir, fmt.Sprintf("IMG_%04d.JPG", i))] = pattern(r.Int63(), 1+r.Intn(24<<10))
	}
	writeFiles(t, src, files)
	// Flushed through the driver (an fsync of any file on exfat-fuse
	// flushes the whole volume): the tree is on the card before the run.
	f, err := os.Open(src)
	noErr(t, err)
	noErr(t, f.Sync())
	noErr(t, f.Close())
	settleSources()
	var ev events
	sum, err := runEngine(t, copyengine.Options{Sources: []string{src}, Dest: dst, Move: true, OnEvent: ev.record})
	if err != nil || sum.SourcesRemoved != int64(len(files)) {
		t.Fatalf("the move: %v (%v), %d sources removed (want %d)", err, ev.failures(), sum.SourcesRemoved, len(files))
	}
	noErr(t, card.Cut())
	noErr(t, d.Cut(false))
	noErr(t, card.Remount())
	noErr(t, d.Remount())
	back, dirs, neither := 0, 0, 0
	for rel, want := range files {
		if _, err := os.Lstat(filepath.Join(src, rel)); err == nil {
			back++
		}
		if !srcdurableHolds(filepath.Join(dst, rel), want) && !srcdurableHolds(filepath.Join(src, rel), want) {
			neither++
		}
	}
	for _, dir := range []string{"100CANON", "101CANON", "102CANON", "100CANON/burst"} {
		if _, err := os.Lstat(filepath.Join(src, dir)); err == nil {
			dirs++
		}
	}
	t.Logf("after the cut: %d of %d moved files back on the card, %d of 4 removed directories, %d files on neither side", back, len(files), dirs, neither)
	if neither > 0 {
		t.Errorf("%d files are whole on neither side", neither)
	}
	if back > 0 || dirs > 0 {
		t.Errorf("--move exited 0, yet after a power cut %d of %d moved files and %d of 4 removed directories are back on the card", back, len(files), dirs)
	}
}
