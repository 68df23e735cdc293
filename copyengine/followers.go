package copyengine

import (
	"strings"

	"github.com/fastcopy/fastcopy/internal/follower"
	"github.com/fastcopy/fastcopy/internal/outcome"
)

// linkFollowers makes every further name of a source inode a hard link to
// the first name's copy, once that copy is in place.
func (dp *deduper) linkFollowers() {
	e := dp.e
	if e.skipWrite() {
		for _, f := range dp.followers {
			if err := dp.wouldLink(f); err != nil {
				e.fail(f.rel, err)
			}
		}
		return
	}
	for _, f := range dp.followers {
		if e.ctx.Err() != nil || e.drives.Halted() {
			return
		}
		if err := dp.linkOne(f); err != nil {
			e.fail(f.rel, err)
		}
		f.stage.settle()
	}
}

func (dp *deduper) linkOne(f linkFollower) error {
	e := dp.e
	cfg := follower.Config{OpenDir: e.staged.dirs.OpenDir, ClearLeftover: e.made.Clear, Made: e.made, BeforeReplace: e.backups.beforeReplace}
	linked, err := cfg.Link(f.name())
	if err != nil {
		return err
	}
	if !linked {
		o := skipOutcome(f.rel, f.st.Size, false, f.group.sum)
		o.Extra, o.Listed = f.group.extra, true // another name of the leader's inode
		e.report(o)
		e.mover.Note(f.mv, f.group.sum)
		return nil
	}
	e.staged.report(f.stage, f.rel, func() {
		e.report(&outcome.Outcome{Kind: outcome.Linked, Action: ActLink, Path: f.rel, Size: f.st.Size, Sum: f.group.sum,
			Extra: f.group.extra, Listed: true}) // another name of the leader's inode
		e.mover.Note(f.mv, f.group.sum)
	})
	return nil
}

// name is f as the follower package takes it, with where its leader's
// copy stands (f.group.done closed, f.group.ok). f.clash is an error only
// when there is one (a nil *CollisionError is no error).
func (f *linkFollower) name() follower.Name {
	n := follower.Name{Rel: f.rel, LeaderRel: f.group.leaderRel, Want: follower.Ino{Dev: f.group.ino.dev, Ino: f.group.ino.ino}, Tmp: f.tmp}
	select {
	case <-f.group.done:
		if !f.group.ok {
			n.Leader = follower.LeaderFailed
		}
	default:
		n.Leader = follower.LeaderNotCopied
	}
	if f.clash != nil {
		n.Clash = f.clash
	}
	return n
}

func splitRel(rel string) (dir, name string) {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}
