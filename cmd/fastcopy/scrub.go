package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// errRotten is the outcome of a run that is done but found rot: a DEST
// file (--scrub) or a --link-dest file whose bytes on the device are not
// those its hash-cache entry recorded, its stat unchanged (exit 8). The
// copy's promise holds (what was rotten was copied again, or named), but
// the device is failing, and a script that checks only for 0 must see it.
var errRotten = errors.New("rot found on the destination device: files whose bytes changed under an unchanged stat (named above)")

// scrubAge is a --scrub value: a whole number of days (30d), hours (12h),
// minutes (90m) or seconds, or any Go duration (1h30m).
type scrubAge time.Duration

func (a *scrubAge) String() string {
	if *a == 0 {
		return ""
	}
	return time.Duration(*a).String()
}

func (a *scrubAge) Type() string { return "age" }

func (a *scrubAge) Set(s string) error {
	bad := fmt.Errorf("%q is not an age: give a number of days, hours, minutes or seconds, such as 30d, 12h or 90m", s)
	t := strings.TrimSpace(s)
	var d time.Duration
	if n, err := strconv.ParseUint(strings.TrimSuffix(t, "d"), 10, 32); err == nil && strings.HasSuffix(t, "d") {
		d = time.Duration(n) * 24 * time.Hour
	} else if v, err := time.ParseDuration(t); err == nil {
		d = v
	} else {
		return bad
	}
	if d <= 0 {
		return fmt.Errorf("%q: the age must be more than zero", s)
	}
	*a = scrubAge(d)
	return nil
}

// byteSize is a --scrub-max value: bytes, with K, M, G or T (binary
// multiples) as for --bwlimit.
type byteSize int64

func (b *byteSize) String() string {
	if *b == 0 {
		return ""
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	t := strings.TrimSuffix(strings.TrimSpace(s), "iB")
	mult := int64(1)
	if strings.HasSuffix(t, "T") || strings.HasSuffix(t, "t") {
		t, mult = t[:len(t)-1]+"G", 1<<10
	}
	n, err := parseRate(t)
	if err != nil {
		return fmt.Errorf("%q is not a size: give bytes, such as 500M, 64G or 1T (K, M, G, T are 1024, 1024², 1024³, 1024⁴)", s)
	}
	*b = byteSize(n * mult)
	return nil
}
