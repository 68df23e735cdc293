//go:build windows

package fileio

// DeviceOf reports the device as unknown: Windows tells no rotational or
// USB disk from an SSD here, and the caller picks its default.
func DeviceOf(path string) Device { return Device{unknown: true} }

// OpenLimit returns 0: Windows sets no small per-process limit on handles.
func OpenLimit() int { return 0 }

// ReserveDescriptors does nothing: Windows handles are not a table that
// grows by doubling.
func ReserveDescriptors(n int) {}
