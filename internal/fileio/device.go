package fileio

import "fmt"

// Device describes the block device under a path, for choosing concurrency.
type Device struct {
	Name       string // e.g. "vda", "sdb"; empty when there is none
	Rotational bool   // the queue says it seeks
	USB        bool   // attached through USB
	Virtual    bool   // a paravirtual disk (virtio, xen), whose rotational flag means nothing

	unknown bool // the platform cannot tell (all but Linux)
}

// String describes the device for -v output.
func (d Device) String() string {
	if d.unknown {
		return "a device of unknown kind"
	}
	if d.Name == "" {
		return "no block device"
	}
	kind := "ssd"
	switch {
	case d.Virtual:
		kind = "virtual disk"
	case d.Rotational:
		kind = "rotational"
	}
	if d.USB {
		kind += ", usb"
	}
	return fmt.Sprintf("%s (%s)", d.Name, kind)
}
