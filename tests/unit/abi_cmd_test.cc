// Filled in by the catalogue work.
