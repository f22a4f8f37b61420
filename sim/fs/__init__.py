"""File-system semantics: BeeGFS striping and servers, GPFS block allocation, NSD servers, pagepool."""
