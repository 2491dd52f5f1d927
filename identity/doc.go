// Package identity manages who each agent is: its IDENTITY.md (role,
// priorities, limits, relation to the other agents, and its public key in
// the frontmatter) and its ed25519 signing key under .nexus/keys/.
//
// The live log and the decision log sign entries through [Signer] and check
// them with [Keyring].
package identity
