package dates

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.UTC()
	}
	for _, tt := range []struct {
		in       string
		start    time.Time
		end      time.Time // ParseEnd
		rejected bool
	}{
		{in: "2026-11-01", start: utc("2026-11-01T00:00:00Z"), end: utc("2026-11-01T23:59:59.999999999Z")},
		{in: " 2026-11-01 ", start: utc("2026-11-01T00:00:00Z"), end: utc("2026-11-01T23:59:59.999999999Z")},
		{in: "2026-11-01T10:30", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01T10:30:15", start: utc("2026-11-01T10:30:15Z"), end: utc("2026-11-01T10:30:15Z")},
		{in: "2026-11-01 10:30", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01 10:30:15", start: utc("2026-11-01T10:30:15Z"), end: utc("2026-11-01T10:30:15Z")},
		{in: "2026-11-01T10:30:00Z", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01T19:30:00+09:00", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01T19:30+09:00", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01 19:30+09:00", start: utc("2026-11-01T10:30:00Z"), end: utc("2026-11-01T10:30:00Z")},
		{in: "2026-11-01T10:30:00.5Z", start: utc("2026-11-01T10:30:00.5Z"), end: utc("2026-11-01T10:30:00.5Z")},
		{in: "", rejected: true},
		{in: "yesterday", rejected: true},
		{in: "2026-13-01", rejected: true},
		{in: "2026-02-30", rejected: true},
		{in: "01/11/2026", rejected: true},
		{in: "2026-11-01T25:00", rejected: true},
		{in: "2026-11", rejected: true},
		{in: "２０２６-11-01", rejected: true}, // full-width digits
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			gotEnd, errEnd := ParseEnd(tt.in)
			if tt.rejected {
				var de *Error
				if !errors.As(err, &de) || !errors.As(errEnd, &de) || de.Input != tt.in {
					t.Fatalf("Parse(%q) = %v, %v; ParseEnd: %v; want *Error", tt.in, got, err, errEnd)
				}
				return
			}
			if err != nil || errEnd != nil {
				t.Fatalf("Parse(%q): %v, %v", tt.in, err, errEnd)
			}
			if !got.Equal(tt.start) || got.Location() != time.UTC {
				t.Errorf("Parse(%q) = %v, want %v UTC", tt.in, got, tt.start)
			}
			if !gotEnd.Equal(tt.end) {
				t.Errorf("ParseEnd(%q) = %v, want %v", tt.in, gotEnd, tt.end)
			}
		})
	}
}

func TestErrorNamesInputAndLayouts(t *testing.T) {
	_, err := Parse("tomorrow")
	want := `"tomorrow" is not a date or time: use ` + Help
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-11-01", "2026-11-01T10:30", "2026-11-01T19:30:00+09:00", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		b, errEnd := ParseEnd(s)
		if (err == nil) != (errEnd == nil) {
			t.Fatalf("Parse and ParseEnd disagree on %q: %v, %v", s, err, errEnd)
		}
		if err != nil {
			return
		}
		if a.Location() != time.UTC || b.Before(a) || b.Sub(a) >= 24*time.Hour {
			t.Fatalf("%q: start %v, end %v", s, a, b)
		}
		// What Parse returns, formatted as RFC 3339, parses back the same.
		back, err := Parse(a.Format(time.RFC3339Nano))
		if err != nil || !back.Equal(a) {
			t.Fatalf("%q: round trip %v -> %v, %v", s, a, back, err)
		}
	})
}
