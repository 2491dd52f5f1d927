//go:build !windows

package livelog

import (
	"errors"
	"github.com/nexus-memory/nexus/vault"
	"io"
	"os"
	"syscall"
)

// openFile is os.OpenFile for the append path's regular files, without
// os.OpenFile's attempt to register the file with the poller (four fcntl
// calls and a failing epoll_ctl per open on Linux, for a file that can
// never be polled): an append opens a dozen files.
func openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

// readFile is os.ReadFile by way of [openFile].
func readFile(name string) ([]byte, error) {
	f, err := vault.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 512
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		size = int(st.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
