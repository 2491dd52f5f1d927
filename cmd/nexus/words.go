package main

import "fmt"

// plural is "1 note", "2 notes", "0 notes": a count with its noun in the
// right number. many is the plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
