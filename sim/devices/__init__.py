"""Device models: NVMe and HDD drives, RAID groups, ME4 controllers. Each turns an I/O into time."""
