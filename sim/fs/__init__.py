"""File systems on the simulated hardware: the platform (stations and devices of the topology's
parts), BeeGFS striping and servers, GPFS block allocation, NSD servers and pagepool, and the
BeeGFS and GPFS metadata paths that mdtest exercises."""
