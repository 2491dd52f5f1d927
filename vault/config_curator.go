package vault

import "time"

// CuratorConfig is the curator: block of config.yaml. Zero values mean the
// defaults (the getters apply them), so a vault that never set the block
// does not get one written by an unrelated config change.
type CuratorConfig struct {
	// Off stops automatic passes from serve and watch ('nexus curator
	// run' still works).
	Off bool `yaml:"off,omitempty"`
	// Recall false stops recording recall signals on this machine.
	Recall *bool `yaml:"recall,omitempty"`
	// StaleDays without a recall make a fact stale (default 30).
	StaleDaysN int `yaml:"stale_days,omitempty"`
	// ArchiveDays without a recall propose a fact for archive (default 90).
	ArchiveDaysN int `yaml:"archive_days,omitempty"`
	// PressurePercent of its limit makes MEMORY.md/USER.md spill (default 80).
	PressurePercentN int `yaml:"pressure_percent,omitempty"`
	// PromoteRecalls and PromoteQueries: a fact read after searches at
	// least this often, from at least this many distinct queries, is
	// proposed for MEMORY.md (defaults 3 and 3).
	PromoteRecallsN int `yaml:"promote_recalls,omitempty"`
	PromoteQueriesN int `yaml:"promote_queries,omitempty"`
	// EveryHours between automatic passes (default 24); the first one
	// waits this long after the curator first saw the vault.
	EveryHoursN int `yaml:"every_hours,omitempty"`
	// MergePercent is the shingle similarity (Jaccard, in percent) at
	// which two facts of one agent are proposed as one (default 70).
	MergePercentN int `yaml:"merge_percent,omitempty"`
	// IdleSeconds without a write to the vault before an automatic pass
	// may start (default 120).
	IdleSecondsN int `yaml:"idle_seconds,omitempty"`
}

func orDefault(n, d int) int {
	if n <= 0 {
		return d
	}
	return n
}

// StaleDays is stale_days or 30.
func (c CuratorConfig) StaleDays() int { return orDefault(c.StaleDaysN, 30) }

// ArchiveDays is archive_days or 90 (never less than StaleDays).
func (c CuratorConfig) ArchiveDays() int { return max(orDefault(c.ArchiveDaysN, 90), c.StaleDays()) }

// PressurePercent is pressure_percent or 80 (at most 100).
func (c CuratorConfig) PressurePercent() int { return min(orDefault(c.PressurePercentN, 80), 100) }

// PromoteRecalls is promote_recalls or 3.
func (c CuratorConfig) PromoteRecalls() int { return orDefault(c.PromoteRecallsN, 3) }

// PromoteQueries is promote_queries or 3.
func (c CuratorConfig) PromoteQueries() int { return orDefault(c.PromoteQueriesN, 3) }

// MergePercent is merge_percent or 70 (at most 100).
func (c CuratorConfig) MergePercent() int { return min(orDefault(c.MergePercentN, 70), 100) }

// Every is every_hours (default 24) as a duration.
func (c CuratorConfig) Every() time.Duration {
	return time.Duration(orDefault(c.EveryHoursN, 24)) * time.Hour
}

// Idle is idle_seconds (default 120) as a duration.
func (c CuratorConfig) Idle() time.Duration {
	return time.Duration(orDefault(c.IdleSecondsN, 120)) * time.Second
}

// RecallOff reports recall: false.
func (c CuratorConfig) RecallOff() bool { return c.Recall != nil && !*c.Recall }
