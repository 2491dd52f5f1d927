package person

import "os"

// Tests seal keys with fewer iterations: the work factor is not what they
// test, and 600,000 rounds per key would dominate their time.
func init() {
	minIterations = 1000
	newIterations = 1000
}

func readFile(tb interface{ Fatal(...any) }, p string) []byte {
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}
