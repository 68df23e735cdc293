package follower

import "fmt"

// Leader is where the leader's copy stands when its followers are linked:
// in place (the zero value), never copied, or failed to copy.
type Leader int

// The Leader states.
const (
	LeaderPlaced    Leader = iota // the leader is in place under its final name
	LeaderNotCopied               // the leader was not copied (the run stopped before it)
	LeaderFailed                  // the leader's copy failed
)

// leaderErr says why a follower of a leader at leaderRel, in state l,
// cannot be linked to it; nil once the leader is in place.
func (l Leader) leaderErr(leaderRel string) error {
	switch l {
	case LeaderNotCopied:
		return fmt.Errorf("hard link to %q: its first name was not copied", leaderRel)
	case LeaderFailed:
		return fmt.Errorf("hard link to %q: its first name failed to copy", leaderRel)
	}
	return nil
}
