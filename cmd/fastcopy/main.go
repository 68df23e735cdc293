// Command fastcopy copies files and trees, verified, deduplicated and
// incremental. See README.md and docs/.
package main

import "os"

func main() { os.Exit(Main()) }
