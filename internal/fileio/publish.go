package fileio

// WriteFileAtomic publishes a small file a run writes whole (an ASC MHL
// generation and chain, a BagIt bag's tag files): data is written to a
// temporary name beside name ("."+name+".fastcopy-tmp", replaced when a
// crash left one), flushed, renamed over name, and the directory flushed,
// so that name holds the old content or the new one, whole, never part of
// either. flush false leaves the flushes out (--no-sync). On error the
// temporary is removed.
func WriteFileAtomic(d *Dir, name string, data []byte, flush bool) (err error) {
	tmp := "." + name + ".fastcopy-tmp"
	f, err := CreateTempMode(d, tmp, 0o666)
	if IsExist(err) {
		if err = d.Remove(tmp); err == nil {
			f, err = CreateTempMode(d, tmp, 0o666)
		}
	}
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = d.Remove(tmp)
		}
	}()
	err = f.WriteAt(data, 0)
	if err == nil && flush {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = d.Rename(tmp, d, name); err != nil {
		return err
	}
	if !flush {
		return nil
	}
	return d.AsFile().Sync()
}
