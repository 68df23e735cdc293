package copyengine

import "github.com/fastcopy/fastcopy/internal/readorder"

// ReadOrder says in which order a run reads its source files
// (readorder.Order): on a disk that seeks, reading files in the order
// their data lies on the disk turns a seek per file into one sweep. It is
// a pflag.Value.
type ReadOrder = readorder.Order

// The read orders (readorder.Auto and the others).
const (
	// ReadOrderAuto reads in disk order when the source is on a
	// rotational or USB disk, and in listing order otherwise (see
	// ChooseReadOrder).
	ReadOrderAuto = readorder.Auto
	// ReadOrderDisk reads each window of pending files in the order of
	// the place of their first data on the device (FIEMAP), then by
	// inode number, then in listing order.
	ReadOrderDisk = readorder.Disk
	// ReadOrderInode reads each window in inode-number order, then in
	// listing order.
	ReadOrderInode = readorder.Inode
	// ReadOrderListing reads files in the order the walk lists them
	// (directory by directory, names sorted).
	ReadOrderListing = readorder.Listing
)

// ChooseReadOrder resolves o for a source at src and says why, for -v and
// --json: an order given explicitly is kept; auto becomes disk order on a
// rotational or USB disk (as ChooseJobs picks one stream there) and
// listing order on anything else (readorder.Choose).
func ChooseReadOrder(o ReadOrder, src string) (ReadOrder, string) {
	return readorder.Choose(o, src)
}
