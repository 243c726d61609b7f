package sqlite

// PrefixSpan is how much of a cut body's start a heads query keeps.
const PrefixSpan = prefixSpan
