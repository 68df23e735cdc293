package outcome

import "github.com/fastcopy/fastcopy/verify"

// Unchanged is the outcome of an entry the destination holds already:
// skipped, or fixed when its metadata was brought up to date; sum is its
// digest, when known (zero otherwise).
func Unchanged(rel string, size int64, fixed bool, sum verify.Sum) *Outcome {
	o := &Outcome{Kind: Skipped, Action: ActSkip, Path: rel, Size: size, Sum: sum}
	if fixed {
		o.Kind, o.Action = Fixed, ActMeta
	}
	return o
}
