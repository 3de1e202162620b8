// Durable, owner-only file operations for the release store and the audit log: whole files
// written to a temporary name, fsync'ed and renamed (readers see the old file or the new one,
// never half of one), folders created 0700, files 0600, and an advisory lock that serialises
// writers of one store. Free functions; safe to call from several threads on different paths.
#pragma once

#include <string>

#include "switchyard/status.h"

namespace switchyard::release {

// Creates `dir` and its missing parents with mode 0700 (existing folders keep their mode).
Status MakeDirs(const std::string& dir);
// Writes `bytes` to `path`: PATH.tmp.PID (mode 0600, O_EXCL), fsync, rename, fsync of the
// folder. A crash leaves either the old content or the new one (and perhaps a stray .tmp).
Status WriteFileDurable(const std::string& path, const std::string& bytes);
// fsync of a folder, so that a rename or a new entry in it survives a crash.
Status SyncDir(const std::string& dir);
// Appends `line` (which must end in '\n') to `path` with one write() on an O_APPEND
// descriptor (created 0600), then fsync: concurrent appenders never split each other's lines.
Status AppendLineDurable(const std::string& path, const std::string& line);
// Copies `from` to `to` durably (same guarantees as WriteFileDurable).
Status CopyFileDurable(const std::string& from, const std::string& to);

// An exclusive flock() on `path` (created 0600) held for the object's lifetime. Writers of a
// store (promote, rollback) take it so that two of them never pick the same version number.
class FileLock {
 public:
  static Result<FileLock> Acquire(const std::string& path);
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace switchyard::release
