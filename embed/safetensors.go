package embed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// A tensor of a safetensors file: its dtype, shape and where its bytes
// are, relative to the end of the header.
type tensorInfo struct {
	DType   string  `json:"dtype"`
	Shape   []int64 `json:"shape"`
	Offsets []int64 `json:"data_offsets"`
}

// maxHeader bounds a safetensors header (the format's own limit is 100 MB).
const maxHeader = 100 << 20

// dtypeSize is the byte size of the dtypes this package reads.
var dtypeSize = map[string]int64{"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I8": 1, "U8": 1, "I16": 2, "I32": 4, "I64": 8}

// safetensors is a parsed safetensors header: the tensors by name and
// where the data starts in the file.
type safetensors struct {
	tensors  map[string]tensorInfo
	dataAt   int64 // 8 + header length
	dataSize int64 // bytes of the file after the header
	header   []byte
}

// parseSafetensorsHeader reads the header of a safetensors file of size
// bytes through r: an 8-byte little-endian length, then that many bytes
// of JSON mapping tensor names to dtype, shape and [begin, end) offsets
// into the data that follows. It checks that every tensor's bytes lie in
// the file, match its shape and dtype, and do not overlap.
func parseSafetensorsHeader(r io.ReaderAt, size int64) (*safetensors, error) {
	var lenBuf [8]byte
	if size < 8 {
		return nil, fmt.Errorf("safetensors: file of %d bytes has no header", size)
	}
	if _, err := r.ReadAt(lenBuf[:], 0); err != nil {
		return nil, fmt.Errorf("read safetensors header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n < 2 || n > maxHeader || int64(n) > size-8 {
		return nil, fmt.Errorf("safetensors: header length %d does not fit a file of %d bytes", n, size)
	}
	header := make([]byte, n)
	if _, err := r.ReadAt(header, 8); err != nil {
		return nil, fmt.Errorf("read safetensors header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(header, &raw); err != nil {
		return nil, fmt.Errorf("safetensors: header is not a JSON object: %w", err)
	}
	st := &safetensors{tensors: map[string]tensorInfo{}, dataAt: 8 + int64(n), dataSize: size - 8 - int64(n), header: header}
	type span struct {
		b, e int64
		name string
	}
	var spans []span
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var ti tensorInfo
		if err := json.Unmarshal(msg, &ti); err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		es, ok := dtypeSize[ti.DType]
		if !ok {
			// Unknown dtypes are allowed in the file; reading one is not.
			es = 0
		}
		if len(ti.Offsets) != 2 || ti.Offsets[0] < 0 || ti.Offsets[1] < ti.Offsets[0] || ti.Offsets[1] > st.dataSize {
			return nil, fmt.Errorf("safetensors: tensor %q: offsets %v outside the %d data bytes", name, ti.Offsets, st.dataSize)
		}
		count := int64(1)
		for _, d := range ti.Shape {
			if d < 0 || (d > 0 && count > math.MaxInt64/d) {
				return nil, fmt.Errorf("safetensors: tensor %q: bad shape %v", name, ti.Shape)
			}
			count *= d
		}
		if es > 0 && (count > math.MaxInt64/es || count*es != ti.Offsets[1]-ti.Offsets[0]) {
			return nil, fmt.Errorf("safetensors: tensor %q: shape %v of %s needs other than the %d bytes its offsets give", name, ti.Shape, ti.DType, ti.Offsets[1]-ti.Offsets[0])
		}
		st.tensors[name] = ti
		if ti.Offsets[1] > ti.Offsets[0] {
			spans = append(spans, span{ti.Offsets[0], ti.Offsets[1], name})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].b < spans[j].b })
	for i := 1; i < len(spans); i++ {
		if spans[i].b < spans[i-1].e {
			return nil, fmt.Errorf("safetensors: tensors %q and %q overlap", spans[i-1].name, spans[i].name)
		}
	}
	return st, nil
}

// tensor is one tensor's bytes as stored, with its dtype and shape.
type tensor struct {
	dtype string
	shape []int64
	data  []byte
}

// read loads the named tensor's bytes.
func (st *safetensors) read(r io.ReaderAt, name string) (*tensor, error) {
	ti, ok := st.tensors[name]
	if !ok {
		return nil, fmt.Errorf("safetensors: no tensor %q", name)
	}
	if _, ok := dtypeSize[ti.DType]; !ok {
		return nil, fmt.Errorf("safetensors: tensor %q has dtype %s, which is not read", name, ti.DType)
	}
	data := make([]byte, ti.Offsets[1]-ti.Offsets[0])
	if _, err := r.ReadAt(data, st.dataAt+ti.Offsets[0]); err != nil {
		return nil, fmt.Errorf("read tensor %q: %w", name, err)
	}
	return &tensor{dtype: ti.DType, shape: ti.Shape, data: data}, nil
}

// float reads element i of a float or int8 tensor as float32.
func (t *tensor) float(i int) float32 {
	switch t.dtype {
	case "F32":
		return math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
	case "F16":
		return f16(binary.LittleEndian.Uint16(t.data[2*i:]))
	case "BF16":
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.data[2*i:])) << 16)
	case "F64":
		return float32(math.Float64frombits(binary.LittleEndian.Uint64(t.data[8*i:])))
	case "I8":
		return float32(int8(t.data[i]))
	case "U8":
		return float32(t.data[i])
	case "I16":
		return float32(int16(binary.LittleEndian.Uint16(t.data[2*i:])))
	case "I32":
		return float32(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
	case "I64":
		return float32(int64(binary.LittleEndian.Uint64(t.data[8*i:])))
	}
	return 0
}

// addRow adds w times row r of a 2-D float or int8 tensor of width
// len(sum) to sum (the dtype switch is outside the loop: this is the
// static model's inner loop).
func (t *tensor) addRow(sum []float32, r int, w float32) {
	d := len(sum)
	switch t.dtype {
	case "F32":
		b := t.data[4*r*d : 4*(r+1)*d]
		for j := range sum {
			sum[j] += w * math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
		}
	case "F16":
		b := t.data[2*r*d : 2*(r+1)*d]
		for j := range sum {
			sum[j] += w * f16(binary.LittleEndian.Uint16(b[2*j:]))
		}
	case "I8":
		b := t.data[r*d : (r+1)*d]
		for j := range sum {
			sum[j] += w * float32(int8(b[j]))
		}
	default:
		for j := range sum {
			sum[j] += w * t.float(r*d+j)
		}
	}
}

// integer reads element i of an integer tensor.
func (t *tensor) integer(i int) int64 {
	switch t.dtype {
	case "I64":
		return int64(binary.LittleEndian.Uint64(t.data[8*i:]))
	case "I32":
		return int64(int32(binary.LittleEndian.Uint32(t.data[4*i:])))
	case "I16":
		return int64(int16(binary.LittleEndian.Uint16(t.data[2*i:])))
	case "I8":
		return int64(int8(t.data[i]))
	case "U8":
		return int64(t.data[i])
	}
	return int64(t.float(i))
}

// f16 converts an IEEE 754 half-precision float to float32.
func f16(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise it
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		frac &= 0x3ff
		return math.Float32frombits(sign | e<<23 | frac<<13)
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
