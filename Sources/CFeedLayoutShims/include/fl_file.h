// File-system calls Swift's Glibc module does not export.
#pragma once

/// Swaps two paths in one step (Linux renameat2 with RENAME_EXCHANGE): both must exist. Returns 0, or -1 with
/// errno set.
int fl_rename_exchange(const char *first, const char *second);
