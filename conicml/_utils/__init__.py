"""Private helpers shared across layers: input checks, feature scaling, similarities,
small linear algebra, BLAS threads, progress bars, renamed keywords."""
