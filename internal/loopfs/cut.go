package loopfs

import "fmt"

// Cut simulates a power cut: the filesystem is shut down at once with
// `xfs_io -x -c shutdown` (the XFS_IOC_GOINGDOWN ioctl, which ext4 takes
// too), so that nothing more reaches its device: dirty pages and, unless
// logFlush, the log in memory are lost, as they would be if the machine lost
// power. Only what was on the device survives Remount. logFlush (-f) first
// writes the log out, as a cut just after the journal commit would.
func (fs *FS) Cut(logFlush bool) error {
	args := []string{"-x", "-c", "shutdown"}
	if logFlush {
		args[2] = "shutdown -f"
	}
	if out, err := command("xfs_io", append(args, fs.Dir)...); err != nil {
		return fmt.Errorf("xfs_io %s: %v\n%s", fs.Dir, err, out)
	}
	return nil
}

// Remount unmounts the filesystem and mounts its device again, which
// recovers it from its log as a boot after a power cut would.
func (fs *FS) Remount() error {
	if fs.Dev == "" {
		return fmt.Errorf("%s is not on a device", fs.Dir)
	}
	if err := fs.unmount(); err != nil {
		return err
	}
	if out, err := command("mount", "-t", fs.Type, fs.Dev, fs.Dir); err != nil {
		return fmt.Errorf("mount %s on %s: %v\n%s", fs.Dev, fs.Dir, err, out)
	}
	return nil
}

// CanCut reports why Cut cannot run here, or nil when it can.
func CanCut() error {
	return need("xfs_io")
}
