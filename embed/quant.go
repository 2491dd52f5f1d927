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
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += int32(a[i])*int32(b[i]) + int32(a[i+4])*int32(b[i+4])
		s1 += int32(a[i+1])*int32(b[i+1]) + int32(a[i+5])*int32(b[i+5])
		s2 += int32(a[i+2])*int32(b[i+2]) + int32(a[i+6])*int32(b[i+6])
		s3 += int32(a[i+3])*int32(b[i+3]) + int32(a[i+7])*int32(b[i+7])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}
