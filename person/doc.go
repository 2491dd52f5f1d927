// Package person holds a person's review key (SPEC §7): an ed25519 key a
// person creates with 'nexus person init', kept machine-local under
// .nexus/keys/person/ and encrypted at rest with a passphrase
// (PBKDF2-HMAC-SHA256, 600,000 iterations, then AES-256-GCM). With
// review.require_person_key set, every review decision is signed with it.
//
// The public half is written to .nexus/people/NAME.pub, which travels with
// the vault so other machines can see it; a verifier trusts only the keys
// this machine has pinned under .nexus/state/people/ (the key made here,
// at init; another machine's, with 'nexus person trust NAME' on a
// terminal). A public key file added or changed by a sync peer is named,
// never trusted on sight.
package person
