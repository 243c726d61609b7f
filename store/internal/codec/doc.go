// Package codec is the binary body of an entry, the one encoding both
// store/sqlite and store/postgres keep (drawn in store/sqlite's doc.go),
// and the decoding of the cut bodies a heads query returns (store.Heads).
// It lives apart from both backends so that neither links the other: a
// PostgreSQL-only build carries no SQLite (issue 19).
package codec
