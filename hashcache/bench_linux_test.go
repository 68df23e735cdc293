package hashcache

import "syscall"

func syncAll() error { syscall.Sync(); return nil }
