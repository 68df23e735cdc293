package fileio

// Op names a file operation that a fault can be injected into (in test
// builds with the tag fcfault; see fault_on.go).
type Op string

// The operations a fault can be injected into.
const (
	OpOpenDir   Op = "opendir"
	OpReadDir   Op = "readdir"
	OpStat      Op = "stat"
	OpOpen      Op = "open"
	OpCreate    Op = "create"
	OpRead      Op = "read"
	OpWrite     Op = "write"
	OpSync      Op = "sync"
	OpSyncfs    Op = "syncfs" // a filesystem-wide flush (also counts as OpSync)
	OpRename    Op = "rename"
	OpRemove    Op = "remove" // unlink of a non-directory
	OpMkdir     Op = "mkdir"
	OpLink      Op = "link"
	OpClone     Op = "clone"
	OpCopyRange Op = "copyrange"
	OpChmod     Op = "chmod"
	OpChown     Op = "chown"
	OpUtimes    Op = "utimes"   // setting times through a Node
	OpPrefetch  Op = "prefetch" // a read-ahead request; a fault skips it
	OpSeekData  Op = "seekdata" // SEEK_DATA; a fault of ENXIO makes it report no more data
	OpFiemap    Op = "fiemap"   // the place of a file's data (PhysicalStart); a fault makes it unknown
)
