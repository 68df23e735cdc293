//go:build !linux

// Command benchmarks measures fastcopy on Linux only: it drops the kernel's
// caches, reads /proc and uses Linux's fadvise and syncfs (see
// docs/benchmarks.md).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "benchmarks: runs on Linux only (it drops Linux's caches and reads /proc)")
	os.Exit(2)
}
