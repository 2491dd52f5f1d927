package embed

import "math"

// quantize writes v, scaled to unit length, as int8 into q (len(v)):
// q = round(v/max|v| * 127). It returns the factor 1/|q| that makes
// factor * (q · u) the cosine of v and a unit vector u; 0 for a zero
// (or non-finite) v.
func quantize(v []float32, q []int8) float32 {
	var m float64
	for _, x := range v {
		m = max(m, math.Abs(float64(x)))
	}
	if m == 0 || math.IsNaN(m) || math.IsInf(m, 0) {
		clear(q)
		return 0
	}
	var n2 float64
	for i, x := range v {
		r := int8(math.Round(float64(x) / m * 127))
		q[i] = r
		n2 += float64(r) * float64(r)
	}
	return float32(1 / math.Sqrt(n2))
}

// dot8 is the dot product of two int8 vectors of equal length.
func dot8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	for len(a) >= 16 && len(b) >= 16 {
		x, y := a[:16:16], b[:16:16] // one bounds check for sixteen products
		s0 += int32(x[0])*int32(y[0]) + int32(x[4])*int32(y[4]) + int32(x[8])*int32(y[8]) + int32(x[12])*int32(y[12])
		s1 += int32(x[1])*int32(y[1]) + int32(x[5])*int32(y[5]) + int32(x[9])*int32(y[9]) + int32(x[13])*int32(y[13])
		s2 += int32(x[2])*int32(y[2]) + int32(x[6])*int32(y[6]) + int32(x[10])*int32(y[10]) + int32(x[14])*int32(y[14])
		s3 += int32(x[3])*int32(y[3]) + int32(x[7])*int32(y[7]) + int32(x[11])*int32(y[11]) + int32(x[15])*int32(y[15])
		a, b = a[16:], b[16:]
	}
	for i := range a {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
