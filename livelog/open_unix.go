//go:build !windows

package livelog

import (
	"io"
	"os"

	"github.com/nexus-memory/nexus/vault"
)

// readFile is os.ReadFile, through the vault root (vault.OpenFile) for a
// file of a vault, sized from one fstat.
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
