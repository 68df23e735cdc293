package main

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fastcopy/fastcopy/internal/mhl"
	"github.com/fastcopy/fastcopy/verify"
)

// mhlseal DIR writes the next ASC MHL generation of DIR with internal/mhl,
// as a copy would: every regular file (the ascmhl folder aside) hashed and
// handed over with its size and mtime.
func cmdMhlseal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mhlseal DIR")
	}
	root := ts.MkAbs(args[0])
	var files []mhl.File
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "ascmhl" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, mhl.File{Path: filepath.ToSlash(rel), Size: int64(len(data)), ModTime: info.ModTime(), Sum: verify.Bytes(data)})
		return nil
	})
	ts.Check(err)
	w, err := mhl.WriteGeneration(root, &mhl.NewGeneration{
		Creator: mhl.Creator{ToolVersion: version()},
		Process: mhl.Transfer,
		Files:   files,
	})
	ts.Check(err)
	ts.Logf("wrote generation %d: %s", w.Seq, w.Path)
}
