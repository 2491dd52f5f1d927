package vault

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procNamesUs reports whether /proc/locks would name this process by its
// own PID: the kernel prints a lock's holder as a PID of the namespace
// /proc was mounted in (Linux 4.12 and later), which is this process's
// when /proc/self is its PID. It reads no lock table.
func procNamesUs() bool {
	if _, err := os.Stat("/proc/locks"); err != nil {
		return false
	}
	self, err := os.Readlink("/proc/self")
	return err == nil && self == strconv.Itoa(os.Getpid())
}

// procLocksHolder returns the PID that /proc/locks names as holding an
// flock on the file at path (not a waiter), or 0.
func procLocksHolder(path string) int {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0
	}
	dev := uint64(sys.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 2791 fd:01:1835020 0 EOF"; a waiter
		// has "->" after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" {
			continue
		}
		id := strings.Split(fields[5], ":")
		if len(id) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(id[0], 16, 64)
		mnr, err2 := strconv.ParseUint(id[1], 16, 64)
		ino, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || maj != major || mnr != minor || ino != sys.Ino {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}
