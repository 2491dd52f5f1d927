// Package curator keeps bounded memory useful over months (SPEC §7,
// docs/curation.md). From the recall signals each machine records it works
// out which facts went unused ([FactStates]), which MEMORY.md or USER.md is
// too full ([Status]), which facts and log entries are worth promoting to
// memory, and which facts say nearly the same thing; a pass ([Run]) files
// each change as a review item of kind archive, spill, promote or merge
// and writes a diary note to review/curator/. An automatic pass runs from
// a keeper when the vault has been idle ([Auto]).
//
// The curator never applies anything itself: a person approves or rejects
// every proposal through package retention, which calls back into this
// package to carry an approved one out (it registers its kinds with
// [retention.RegisterKind]). Approval takes a snapshot first and leaves a
// marker while it changes files, so a killed approval is rolled back or
// finished, never half done; a whole pass can be rolled back.
package curator
