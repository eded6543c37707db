package safefile

import (
	"os"
	"syscall"
)

// pseudoFS are the magic numbers (statfs f_type) of kernel filesystems
// whose "regular files" are views of kernel or process state.
var pseudoFS = map[uint32]bool{
	0x9fa0:     true, // proc
	0x62656572: true, // sysfs
	0x64626720: true, // debugfs
	0x74726163: true, // tracefs
	0x73636673: true, // securityfs
	0x27e0eb:   true, // cgroup
	0x63677270: true, // cgroup2
	0x1cd1:     true, // devpts
	0xcafe4a11: true, // bpf
	0x62656570: true, // configfs
	0xde5e81e4: true, // efivarfs
	0x6165676c: true, // pstore
	0x42494e4d: true, // binfmt_misc
	0x19800202: true, // mqueue
	0x50495045: true, // pipefs
	0x534f434b: true, // sockfs
	0x09041934: true, // anon_inode_fs
	0x6e736673: true, // nsfs
}

// onPseudoFS reports a file on a pseudo filesystem, or one whose
// filesystem cannot be told.
func onPseudoFS(f *os.File) bool {
	// Through the raw conn, not Fd(), which would switch the descriptor
	// to blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	var st syscall.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return true
	}
	return pseudoFS[uint32(st.Type)]
}
